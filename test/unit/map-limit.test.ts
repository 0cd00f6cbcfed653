/** `mapLimit` (console/call-facts.ts, on p-limit): results in the items' order, never more than `limit` at once. */
import { mapLimit } from '../../console/call-facts';

test('mapLimit keeps the order and never runs more than the limit at once', async () => {
  let running = 0;
  let most = 0;
  const gates: Array<() => void> = [];
  const done = mapLimit([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
    running += 1;
    most = Math.max(most, running);
    await new Promise<void>((resolve) => gates.push(resolve));
    running -= 1;
    return n * 10;
  });
  // Release the calls one at a time, newest first, until all seven have run.
  for (let released = 0; released < 7; released++) {
    while (gates.length === 0) await Promise.resolve();
    gates.pop()!();
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(await done).toEqual([10, 20, 30, 40, 50, 60, 70]);
  expect(most).toBe(3);
});
