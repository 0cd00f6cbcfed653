/**
 * Replay tier: every checked-in history (the release's baseline, and the fixtures of patches in flight) replays
 * with the current workflow code; the baseline covers every path docs/versioning.md lists; a deliberately changed
 * workflow fails with a determinism error; a history round-trips through JSON.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { workflowIdOfHistory } from '../../host/client/history-workflow-id';
import { buildWorkflowBundle } from '../../host/worker/bundle';
import { installRuntimeLogger } from '../../src/observability/logger';
import { BASELINE_PATHS } from './baseline-paths';

jest.setTimeout(120_000);

const root = path.join(__dirname, 'histories');

/** Every `.json` history under `dir`, named by its path from the histories folder. */
function historiesUnder(dir: string): Array<{ name: string; file: string }> {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) return historiesUnder(file);
    return entry.endsWith('.json') ? [{ name: path.relative(root, file), file }] : [];
  });
}
const fixtures = historiesUnder(root);

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

test('the baseline covers every path docs/versioning.md lists, and nothing else is a baseline', () => {
  const baseline = readdirSync(path.join(root, 'baseline')).filter((f) => f.endsWith('.json'));
  expect(baseline.sort()).toEqual(BASELINE_PATHS.map((p) => `${p.fixture}.json`).sort());
  const doc = readFileSync(path.join(__dirname, '..', '..', 'docs', 'versioning.md'), 'utf8');
  for (const p of BASELINE_PATHS)
    expect({ fixture: p.fixture, inDoc: doc.includes(`\`${p.fixture}\``) }).toEqual({
      fixture: p.fixture,
      inDoc: true,
    });
});

/** The stop a recorded run returned (the recorder runs without payload encryption: the result is JSON). */
function recordedStop(file: string): string | undefined {
  const history = JSON.parse(readFileSync(file, 'utf8')) as {
    events: Array<{ workflowExecutionCompletedEventAttributes?: { result?: { payloads?: Array<{ data?: string }> } } }>;
  };
  const done = history.events.find((e) => e.workflowExecutionCompletedEventAttributes);
  const data = done?.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0]?.data;
  return data
    ? (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { stopReason: string }).stopReason
    : undefined;
}

test.each(BASELINE_PATHS)('baseline/$fixture stopped $stop, as the path it stands for', ({ fixture, stop }) => {
  expect(recordedStop(path.join(root, 'baseline', `${fixture}.json`))).toBe(stop);
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
