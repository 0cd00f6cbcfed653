/**
 * Replay tier: every checked-in history replays with the current workflow code; a deliberately changed
 * workflow fails with a determinism error; a history round-trips through JSON.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { workflowIdOfHistory } from '../../src/client/history-workflow-id';
import { buildWorkflowBundle } from '../../src/worker/bundle';
import { installRuntimeLogger } from '../../src/observability/logger';

jest.setTimeout(120_000);

const root = path.join(__dirname, 'histories');
const fixtures = readdirSync(root).flatMap((version) =>
  readdirSync(path.join(root, version))
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ name: `${version}/${f}`, file: path.join(root, version, f) })),
);

let current: { code: string };
let changed: { code: string };
/** Each fixture's replay verdict by name: `undefined` for a clean replay, else the replay's error. */
const verdicts = new Map<string, Error | undefined>();

/**
 * Every fixture replayed with the current code by one replay worker, one history after another (each run is
 * evicted before the next starts), the way a worker picks up runs: the worker and its bundle are made once
 * instead of once per fixture.
 */
async function replayAll(): Promise<void> {
  const items = await Promise.all(
    fixtures.map(async ({ file, name }) => {
      const history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
      // Under the workflow id the run had: an update that named a call (approval, resolution) must find it again.
      return { name, history, workflowId: (await workflowIdOfHistory(history)) ?? name };
    }),
  );
  let i = 0;
  for await (const result of Worker.runReplayHistories({ workflowBundle: current }, items)) {
    verdicts.set(items[i]!.name, result.error);
    i += 1;
  }
}

beforeAll(async () => {
  installRuntimeLogger({ component: 'replay', level: 'OFF' });
  [current, changed] = await Promise.all([
    buildWorkflowBundle(),
    buildWorkflowBundle({ workflowsPath: path.join(__dirname, 'changed-workflow', 'index.ts') }),
  ]);
  await replayAll();
});

test('there are checked-in histories to replay', () => {
  expect(fixtures.length).toBeGreaterThanOrEqual(5);
});

test('each fixture version records every scenario the version before it did', () => {
  // Folders compare by number (v10 after v9), the way a recording script must compare them too.
  const versions = readdirSync(root)
    .filter((v) => /^v[0-9]+$/.test(v))
    .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
  const missing: string[] = [];
  for (let i = 1; i < versions.length; i += 1) {
    const have = new Set(readdirSync(path.join(root, versions[i]!)));
    for (const f of readdirSync(path.join(root, versions[i - 1]!))) {
      if (!have.has(f)) missing.push(`${versions[i]!}/${f}`);
    }
  }
  expect(versions.length).toBeGreaterThanOrEqual(2);
  expect(missing).toEqual([]);
});

test.each(fixtures)('$name replays with the current workflow code', ({ name }) => {
  // A fixture the replay worker never reached (it stopped early) has no verdict, and fails here too.
  expect(verdicts.has(name)).toBe(true);
  expect(verdicts.get(name)).toBeUndefined();
});

test('a deliberately changed workflow fails with a determinism error', async () => {
  const first = fixtures.find((f) => f.name.includes('opening-failure')) ?? fixtures[0]!;
  const history = historyFromJSON(JSON.parse(readFileSync(first.file, 'utf8')));
  await expect(Worker.runReplayHistory({ workflowBundle: changed }, history, first.name)).rejects.toBeInstanceOf(
    DeterminismViolationError,
  );
});

test('a history round-trips through JSON unchanged', () => {
  const raw = readFileSync(fixtures[0]!.file, 'utf8');
  const again = historyToJSON(historyFromJSON(JSON.parse(raw)));
  expect(JSON.parse(again)).toEqual(JSON.parse(raw));
});
