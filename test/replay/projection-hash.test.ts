/**
 * The reducer rebuilds, on replay, the projection every checked-in run returned when it was recorded: for each
 * history, the projection hash the replayed run returns (handed out by a sink, result-hash/interceptors.ts) is
 * byte for byte the `projectionHash` in the recorded completion. Replay alone compares commands, not results, so
 * a reducer change that moves a hash passes `replay.test.ts`; it fails here. The control: a recorded hash changed
 * by one character is reported.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker, type InjectedSinks } from '@temporalio/worker';
import { workflowIdOfHistory } from '../../host/client/history-workflow-id';
import { buildWorkflowBundle } from '../../host/worker/bundle';
import { installRuntimeLogger } from '../../src/observability/logger';
import type { ResultSinks } from './result-hash/interceptors';

jest.setTimeout(120_000);

const root = path.join(__dirname, 'histories');

function historiesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) return historiesUnder(file);
    return entry.endsWith('.json') ? [file] : [];
  });
}

/** The projection hash in a recorded history's completion (the recorder runs without payload encryption). */
function recordedHash(file: string): string | undefined {
  const history = JSON.parse(readFileSync(file, 'utf8')) as {
    events: Array<{ workflowExecutionCompletedEventAttributes?: { result?: { payloads?: Array<{ data?: string }> } } }>;
  };
  const done = history.events.find((e) => e.workflowExecutionCompletedEventAttributes);
  const data = done?.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0]?.data;
  if (data === undefined) return undefined;
  return (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { projectionHash?: string }).projectionHash;
}

/** Differences between the recorded and the replayed hash, by fixture. */
function mismatches(
  recorded: ReadonlyMap<string, string | undefined>,
  replayed: ReadonlyMap<string, string | undefined>,
): string[] {
  return [...recorded].flatMap(([name, want]) => {
    const got = replayed.get(name);
    return want !== undefined && got === want ? [] : [`${name}: recorded ${want}, replayed ${got}`];
  });
}

const files = historiesUnder(root);
const recorded = new Map(files.map((f) => [path.relative(root, f), recordedHash(f)]));
const replayed = new Map<string, string | undefined>();

beforeAll(async () => {
  installRuntimeLogger({ component: 'replay', level: 'OFF' });
  const workflowBundle = await buildWorkflowBundle({
    interceptorModules: [require.resolve('./result-hash/interceptors')],
  });
  const items = await Promise.all(
    files.map(async (file) => {
      const history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
      const name = path.relative(root, file);
      // A run refused before its first plan names its id nowhere in its history: the recorder's id (`record-<name>`,
      // scripts/record-histories.ts) is the one its projection holds.
      const recorderId = `record-${path.basename(file, '.json')}`;
      return { name, history, workflowId: (await workflowIdOfHistory(history)) ?? recorderId };
    }),
  );
  const byWorkflowId = new Map(items.map((i) => [i.workflowId, i.name]));
  const sinks: InjectedSinks<ResultSinks> = {
    replayedResult: {
      projectionHash: {
        fn: (info, hash) => {
          replayed.set(byWorkflowId.get(info.workflowId) ?? info.workflowId, hash);
        },
        callDuringReplay: true,
      },
    },
  };
  // Each fixture under its own workflow id, so a sink call names its fixture.
  expect(byWorkflowId.size).toBe(items.length);
  for await (const result of Worker.runReplayHistories({ workflowBundle, sinks }, items))
    if (result.error) throw result.error;
});

test('every checked-in history rebuilds, on replay, the projection hash its run returned', () => {
  expect(recorded.size).toBeGreaterThan(0);
  expect(mismatches(recorded, replayed)).toEqual([]);
});

test('control: a recorded hash changed by one character is reported', () => {
  const [name, hash] = [...recorded][0]!;
  const flipped = `${hash!.slice(0, -1)}${hash!.endsWith('0') ? '1' : '0'}`;
  expect(mismatches(new Map([[name, flipped]]), replayed)).toEqual([`${name}: recorded ${flipped}, replayed ${hash}`]);
});
