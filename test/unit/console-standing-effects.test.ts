/**
 * What a closed run left standing, read from its history's evidence alone: a committed debit stands until its
 * refund answered; a dispatch nobody answered stands as UNKNOWN until a lookup settles it; a refusal, a sealed key
 * or an offset compensation leaves nothing. Positive control beside each case: the same history without the
 * settling evidence still names the effect.
 */
import type { ActivityEvidence, HistoryEvidence } from '../../host/client/history-evidence';
import { standingEffects } from '../../console/standing-effects';
import { timeline } from '../../console/timeline';
import { builtinTools } from '../../src/tools/registry';
import type { LedgerEvent } from '../../src/domain/ledger-events';

const intent = (id: string, tool = 'wallet_debit', providerCallId = 'p1') => ({
  runId: 'order-1',
  providerCallId,
  logicalCallId: id,
  operationKey: `op_${id}`,
  toolName: tool,
  toolVersion: 1,
  argumentsHash: 'h',
  principalId: 'user:alice',
  tenant: 'acme',
  policyVersion: 'v1',
  deadlineAt: '',
});
const body = { tenant: 'acme', account: 'acct_1', amount: { minor: 1200, currency: 'EUR' } };
const dispatch = (
  id: string,
  closedAs: ActivityEvidence['closedAs'],
  result?: unknown,
  tool?: string,
  provider?: string,
): ActivityEvidence => ({
  activityType: 'dispatchTool',
  activityId: id,
  input: { intent: intent(id, tool, provider), service: 'wallet', body },
  ...(result !== undefined ? { result } : {}),
  ...(closedAs ? { closedAs } : {}),
});
const reconcile = (id: string, result: unknown): ActivityEvidence => ({
  activityType: 'reconcileCall',
  activityId: `r-${id}`,
  input: { intent: intent(id), service: 'wallet', seal: true },
  result,
  closedAs: 'completed',
});
const ev = (...activities: ActivityEvidence[]): HistoryEvidence => ({ activities, updates: [], eventCount: 0 });
const ids = (e: HistoryEvidence) => standingEffects(e, builtinTools).map((s) => `${s.intent.logicalCallId}:${s.state}`);

test('a committed debit stands until its compensation answered', () => {
  const debit = dispatch('lc_1', 'completed', { outcome: 'succeeded', receipt: 'wd_1' });
  expect(ids(ev(debit))).toEqual(['lc_1:SUCCEEDED']);
  expect(standingEffects(ev(debit), builtinTools)[0]).toMatchObject({ receipt: 'wd_1', offsetBy: 'compensate', body });
  const refund = dispatch('cmp_lc_1', 'completed', { outcome: 'succeeded' }, 'wallet_refund', 'saga');
  expect(ids(ev(debit, refund))).toEqual([]);
  const refundLost = dispatch('cmp_lc_1', 'timed_out', undefined, 'wallet_refund', 'saga');
  expect(ids(ev(debit, refundLost))).toEqual(['lc_1:SUCCEEDED']);
});

test('a dispatch nobody answered stands as UNKNOWN until a lookup settles it', () => {
  const lost = dispatch('lc_2', 'timed_out');
  expect(ids(ev(lost))).toEqual(['lc_2:UNKNOWN']);
  expect(ids(ev(lost, reconcile('lc_2', { kind: 'not_found', sealed: true })))).toEqual([]);
  expect(ids(ev(lost, reconcile('lc_2', { kind: 'found', status: 'completed', receipt: 'wd_2' })))).toEqual([
    'lc_2:SUCCEEDED',
  ]);
});

test('a refused dispatch leaves nothing; a compensation itself is never listed', () => {
  expect(
    ids(ev(dispatch('lc_3', 'completed', { outcome: 'rejected', errorCode: 'Wallet.InsufficientFunds' }))),
  ).toEqual([]);
  expect(ids(ev(dispatch('cmp_lc_9', 'timed_out', undefined, 'wallet_refund', 'saga')))).toEqual([]);
});

test('the timeline names each event’s phase, call and who acted', () => {
  const events = [
    {
      type: 'ApprovalGranted',
      logicalCallId: 'lc_1',
      argumentsHash: 'h',
      policyVersion: 'v1',
      approver: 'manager:carol',
      expiresAt: 'x',
      actor: { principalId: 'manager:carol', subject: 's', issuer: 'i', tokenDigest: 'd' },
      seq: 7,
      at: '2026-01-01T00:00:00.000Z',
    },
    {
      type: 'RunCompleted',
      stopReason: 'completed',
      detail: '',
      leftStanding: [],
      seq: 8,
      at: '2026-01-01T00:00:01.000Z',
    },
  ] as unknown as LedgerEvent[];
  expect(timeline(events)).toEqual([
    expect.objectContaining({
      phase: 'decision',
      callId: 'lc_1',
      text: expect.stringContaining('approved by manager:carol (verified: manager:carol)'),
    }),
    expect.objectContaining({ phase: 'stop', text: 'stopped: completed' }),
  ]);
});
