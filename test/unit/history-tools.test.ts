/**
 * The tools a recorded run used, read from its history before a replay (host/client/history-tools.ts): a bundle
 * that lacks one is refused naming the tools, instead of failing with a determinism error that names activities.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { AesGcmPayloadCodec } from '../../src/codec/aes-gcm-codec';
import { parseCodecKeys, generateCodecKeys } from '../../src/codec/data-converter';
import { checkHistoryTools, ReplayToolsMissingError, toolsOfHistory } from '../../host/client/history-tools';
import { builtinTools } from '../../src/tools/registry';

const BASELINE = path.resolve(__dirname, '..', 'replay', 'histories', 'baseline');
const fixture = (name: string): temporal.api.history.v1.IHistory =>
  historyFromJSON(JSON.parse(readFileSync(path.join(BASELINE, name), 'utf8')));

/** A history of scheduled activities with these inputs (only what the reader looks at). */
function historyOf(
  activities: readonly [string, unknown][],
  encode = (p: unknown) => p,
): temporal.api.history.v1.IHistory {
  return {
    events: activities.map(([name, input]) => ({
      activityTaskScheduledEventAttributes: {
        activityType: { name },
        input: { payloads: [encode(defaultPayloadConverter.toPayload(input))] },
      },
    })) as temporal.api.history.v1.IHistoryEvent[],
  };
}

test('a checked-in saga history used the wallet, inventory and shipping tools it dispatched', async () => {
  expect(await toolsOfHistory(fixture('saga-compensated.json'))).toEqual([
    'inventory_release',
    'inventory_reserve',
    'shipping_schedule',
    'wallet_debit',
    'wallet_refund',
  ]);
});

test('a call denied before dispatch still counts: the model was told how it went', async () => {
  const names = await toolsOfHistory(fixture('denied-over-limit.json'));
  expect(names).toContain('wallet_debit');
});

test('the built-in tools replay it; a bundle of other tools is refused naming what it lacks', async () => {
  const history = fixture('saga-compensated.json');
  await expect(checkHistoryTools(history, builtinTools.names(), 'the built-in tools')).resolves.toBeUndefined();
  const refused = checkHistoryTools(history, ['book_room', 'cancel_booking', 'wallet_debit'], '/p/tools.js');
  await expect(refused).rejects.toBeInstanceOf(ReplayToolsMissingError);
  await expect(refused).rejects.toMatchObject({
    name: 'Replay.ToolsMissing',
    missing: ['inventory_release', 'inventory_reserve', 'shipping_schedule', 'wallet_refund'],
  });
  await expect(refused).rejects.toThrow(
    /lacks: inventory_release, inventory_reserve, shipping_schedule, wallet_refund/,
  );
});

test('a tool the recording worker refused as unknown is not one it used', async () => {
  const history = historyOf([
    [
      'planTurn',
      {
        runId: 'r',
        observations: [
          { logicalCallId: 'a', toolName: 'ghost_tool', state: 'FAILED', error: { code: 'Proposal.UnknownTool' } },
          { logicalCallId: 'b', toolName: 'book_room', state: 'SUCCEEDED' },
        ],
      },
    ],
    ['dispatchTool', { intent: { toolName: 'cancel_booking' } }],
    ['reconcileCall', { intent: { toolName: 'lookup_room' } }],
  ]);
  expect(await toolsOfHistory(history)).toEqual(['book_room', 'cancel_booking', 'lookup_room']);
});

test('encrypted inputs are read with the key ring, and skipped (never refused) without it', async () => {
  const { keys } = generateCodecKeys('t1');
  const codec = new AesGcmPayloadCodec(parseCodecKeys(keys));
  const plain = historyOf([['dispatchTool', { intent: { toolName: 'book_room' } }]]);
  const payloads = plain.events!.map((e) => e.activityTaskScheduledEventAttributes!.input!.payloads![0]!);
  const encrypted = await codec.encode(payloads as Parameters<typeof codec.encode>[0]);
  const history = historyOf([]);
  history.events = plain.events!.map((e, i) => ({
    activityTaskScheduledEventAttributes: {
      ...e.activityTaskScheduledEventAttributes,
      input: { payloads: [encrypted[i]!] },
    },
  })) as temporal.api.history.v1.IHistoryEvent[];
  expect(await toolsOfHistory(history, { payloadCodecs: [codec] })).toEqual(['book_room']);
  expect(await toolsOfHistory(history)).toEqual([]);
});
