/**
 * Replay tier, governed sessions: a checked-in history of the governed refund agent (examples/refund-ai-sdk, a
 * lost refund response reconciled by key) replays with today's session code under the same two plugins the
 * worker runs (`AiSdkPlugin`, `LedgerloopPlugin({ ownWorkflows: true })`). The control: the same history with one
 * scheduled activity renamed fails with a determinism error, so a clean replay is evidence.
 *
 * Re-record after a deliberate change to what a session commands (docs/versioning.md):
 *   LEDGERLOOP_RECORD_GOVERNED=1 node -r tsx/cjs scripts/test.ts --runTestsByPath test/integration/refund-ai-sdk-governed.test.ts
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import type { temporal } from '@temporalio/proto';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DeterminismViolationError } from '@temporalio/workflow';
import { Worker } from '@temporalio/worker';
import { generateSigningKey } from '../../src/capability/capability-keys';
import { createDevIssuer } from '../../src/identity/issue';
import { installRuntimeLogger } from '../../src/observability/logger';
import { LedgerloopPlugin, type PolicyDocument } from '../../host/worker/plugin';
import { workflowIdOfHistory } from '../../host/client/history-workflow-id';
import { scriptedRefundProvider } from '../../examples/refund-ai-sdk/src/scripted-model';

jest.setTimeout(180_000);

const GOVERNED = path.resolve(__dirname, '../../examples/refund-ai-sdk/src/governed');
const FIXTURE = path.join(__dirname, 'governed', 'refund-lost-response.json');

async function replayOptions() {
  const issuer = await createDevIssuer(path.join(mkdtempSync(path.join(os.tmpdir(), 'governed-replay-')), 'id'));
  return {
    workflowsPath: path.join(GOVERNED, 'workflows.ts'),
    plugins: [
      new AiSdkPlugin({ modelProvider: scriptedRefundProvider() }),
      new LedgerloopPlugin({
        ownWorkflows: true,
        tools: path.join(GOVERNED, 'workflow-tools.ts'),
        // Replay sends nothing: the URL is never reached.
        services: { payments: 'http://127.0.0.1:9' },
        policy: JSON.parse(readFileSync(path.join(GOVERNED, 'policy.json'), 'utf8')) as PolicyDocument,
        capabilityKey: generateSigningKey(),
        identityIssuers: [issuer.config],
      }),
    ],
  };
}

/** The history with its first scheduled activity renamed: what a changed session would have commanded. */
function renamedFirstActivity(h: temporal.api.history.v1.IHistory): temporal.api.history.v1.IHistory {
  const copy = historyFromJSON(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  const first = copy.events?.find((e) => e.activityTaskScheduledEventAttributes);
  const attrs = first!.activityTaskScheduledEventAttributes!;
  attrs.activityType = { name: `${attrs.activityType?.name ?? ''}Renamed` };
  expect(h.events?.length).toBe(copy.events?.length);
  return copy;
}

const verdicts: Array<Error | undefined> = [];

beforeAll(async () => {
  installRuntimeLogger({ component: 'replay', level: 'OFF' });
  const history = historyFromJSON(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  const workflowId = (await workflowIdOfHistory(history)) ?? 'governed-refund';
  const items = [
    { workflowId, history },
    { workflowId, history: renamedFirstActivity(history) },
  ];
  for await (const result of Worker.runReplayHistories(await replayOptions(), items)) verdicts.push(result.error);
});

test('the governed refund agent’s checked-in history replays with today’s session code', () => {
  expect(verdicts[0]).toBeUndefined();
});

test('control: the same history with one scheduled activity renamed fails with a determinism error', () => {
  expect(verdicts[1]).toBeInstanceOf(DeterminismViolationError);
});

test('the fixture is the path it is named for: the refund dispatched twice under one scheduled call', () => {
  const history = historyFromJSON(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  const events = history.events ?? [];
  const dispatch = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'dispatchTool');
  expect(dispatch).toBeDefined();
  // The first attempt's answer was lost: the one that completed is the retry under the same key.
  const started = events.find(
    (e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === dispatch!.eventId?.toString(),
  );
  expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(2);
});
