/** Cases side by side: never more than the lanes at once, started in order, none once the budget says no. */
import { inLanes } from '../../lab/faults/lanes';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('runs every item, at most `lanes` at a time, each started in order', async () => {
  let running = 0;
  let most = 0;
  const started: number[] = [];
  const n = await inLanes([0, 1, 2, 3, 4, 5, 6], 3, async (x) => {
    started.push(x);
    running += 1;
    most = Math.max(most, running);
    for (let i = 0; i < 3 - (x % 3); i++) await tick(); // items finish out of order
    running -= 1;
  });
  expect(n).toBe(7);
  expect(started).toEqual([0, 1, 2, 3, 4, 5, 6]);
  expect(most).toBe(3);
});

test('once the budget says no, nothing more starts: those started are a prefix, all of them finish', async () => {
  const finished: number[] = [];
  let budget = 4;
  const n = await inLanes(
    [0, 1, 2, 3, 4, 5, 6, 7],
    2,
    async (x) => {
      await tick();
      finished.push(x);
    },
    () => budget-- > 0,
  );
  expect(n).toBe(4);
  expect([...finished].sort()).toEqual([0, 1, 2, 3]);
});

test('one lane runs one item at a time (the sequential explorer)', async () => {
  let running = 0;
  let most = 0;
  await inLanes([1, 2, 3], 1, async () => {
    running += 1;
    most = Math.max(most, running);
    await tick();
    running -= 1;
  });
  expect(most).toBe(1);
});
