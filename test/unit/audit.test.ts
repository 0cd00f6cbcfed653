/**
 * The audit on synthetic ledgers and history evidence: a clean effect passes; every kind of gap (a field the
 * ledger does not name, a history that disagrees, a body that does not hash to the recorded hash, an effect the
 * ledger never recorded, an undecodable payload) is a finding; and the evidence is read from a real-shaped history.
 */
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import { encodeToPayloads } from '@temporalio/common/lib/internal-non-workflow/codec-helpers';
import { temporal } from '@temporalio/proto';
import { auditRun, type AuditCheck, type AuditField, type CallAudit } from '../../host/client/audit';
import {
  historyEvidence,
  type ActivityEvidence,
  type HistoryEvidence,
  type UpdateEvidence,
} from '../../host/client/history-evidence';
import { hashCanonical } from '../../src/domain/canonical';
import type { LedgerEvent, LedgerEventBody } from '../../src/domain/ledger-events';

const body = { tenant: 'acme', account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } };
const HASH = hashCanonical(body);
const KEY = 'op_0123456789abcdef';
const WORKER = 'ledgerloop-worker@host:1';

function intentFor(id: string, over: Record<string, unknown> = {}) {
  return {
    runId: 'run-1',
    providerCallId: `call_${id}`,
    logicalCallId: id,
    operationKey: KEY,
    toolName: 'wallet_debit',
    toolVersion: 1,
    argumentsHash: HASH,
    principalId: 'user:alice',
    tenant: 'acme',
    policyVersion: 'acme/1',
    deadlineAt: '2030-01-01T00:00:00.000Z',
    ...over,
  };
}

class Ledger {
  readonly events: LedgerEvent[] = [];
  add(b: LedgerEventBody): this {
    this.events.push({ ...b, seq: this.events.length + 1, at: '2030-01-01T00:00:00.000Z' } as LedgerEvent);
    return this;
  }
  /** Proposal → canonical → allowed → intent → attempt for call `id`. */
  dispatched(id: string, intentOver: Record<string, unknown> = {}): this {
    return this.add({
      type: 'ToolProposalRecorded',
      turn: 1,
      logicalCallId: id,
      providerCallId: `call_${id}`,
      toolName: 'wallet_debit',
      origin: 'model',
    })
      .add({
        type: 'ArgumentsCanonicalized',
        logicalCallId: id,
        toolVersion: 1,
        argumentsHash: HASH,
        operationKey: KEY,
      })
      .add({
        type: 'AuthorizationAllowed',
        logicalCallId: id,
        principalId: 'user:alice',
        tenant: 'acme',
        origin: 'model',
        action: 'wallet.debit',
        resource: 'acme/account/acct_1',
        scope: 'wallet.charge',
        argumentsHash: HASH,
        policyVersion: 'acme/1',
        issuedAt: 'x',
        reason: 'ok',
      })
      .add({ type: 'DispatchIntentRecorded', logicalCallId: id, intent: intentFor(id, intentOver) })
      .add({ type: 'ToolAttemptStarted', logicalCallId: id, dispatch: 1, keyUsed: KEY });
  }
  succeeded(id: string, over: Record<string, unknown> = {}): this {
    return this.add({
      type: 'ToolResultRecorded',
      logicalCallId: id,
      state: 'SUCCEEDED',
      attempts: 1,
      receipt: 'wd_1',
      replayed: false,
      fence: 1001,
      workerIdentity: WORKER,
      ...over,
    } as LedgerEventBody);
  }
}

function dispatchActivity(
  id: string,
  o: {
    result?: Record<string, unknown>;
    closedAs?: ActivityEvidence['closedAs'];
    intent?: Record<string, unknown>;
    body?: unknown;
    started?: string;
    route?: string;
  } = {},
): ActivityEvidence {
  return {
    activityType: 'dispatchTool',
    activityId: '7',
    input: {
      intent: intentFor(id, o.intent),
      service: 'wallet',
      route: o.route ?? '/v1/debits',
      body: o.body ?? body,
      strategy: 'same_key_replay',
      dispatch: 1,
      keyUsed: KEY,
    },
    startedIdentity: o.started ?? WORKER,
    attempt: 1,
    closedAs: o.closedAs ?? 'completed',
    ...(o.closedAs === undefined || o.closedAs === 'completed'
      ? {
          result: {
            outcome: 'succeeded',
            httpStatus: 201,
            body: {},
            receipt: 'wd_1',
            replayed: false,
            attempt: 1,
            fence: 1001,
            keyUsed: KEY,
            workerIdentity: WORKER,
            ...o.result,
          },
        }
      : {}),
  };
}

const evidence = (activities: ActivityEvidence[], updates: UpdateEvidence[] = []): HistoryEvidence => ({
  activities,
  updates,
  eventCount: 40,
});
const check = (c: CallAudit | undefined, f: AuditField): AuditCheck => c!.checks.find((k) => k.field === f)!;

describe('audit of one effect', () => {
  test('a dispatched, answered, receipted call passes every check', () => {
    const l = new Ledger().dispatched('lc_1_a').succeeded('lc_1_a');
    const r = auditRun(l.events, evidence([dispatchActivity('lc_1_a')]));
    expect(r.ok).toBe(true);
    expect(r.problems).toBe(0);
    expect(r.calls).toHaveLength(1);
    expect(r.calls[0]!.checks.map((c) => [c.field, c.status])).toEqual([
      ['principal', 'ok'],
      ['tenant', 'ok'],
      ['policyVersion', 'ok'],
      ['workerIdentity', 'ok'],
      ['operationKey', 'ok'],
      ['argumentsHash', 'ok'],
      ['receipt', 'ok'],
      ['fence', 'ok'],
    ]);
    expect(check(r.calls[0], 'fence')).toMatchObject({ ledger: '1001', history: ['1001'] });
  });

  test('a SUCCEEDED call whose ledger names no receipt is a finding', () => {
    const l = new Ledger().dispatched('lc_1_a').succeeded('lc_1_a', { receipt: undefined });
    const r = auditRun(l.events, evidence([dispatchActivity('lc_1_a', { result: { receipt: undefined } })]));
    expect(r.ok).toBe(false);
    expect(check(r.calls[0], 'receipt').status).toBe('missing');
  });

  test('an MCP call has no receipt to name (the protocol gives none): not a finding, and the note says so', () => {
    const l = new Ledger().dispatched('lc_1_a').succeeded('lc_1_a', { receipt: undefined });
    const mcp = { result: { receipt: undefined }, route: 'mcp:files/write_file' };
    const r = auditRun(l.events, evidence([dispatchActivity('lc_1_a', mcp)]));
    expect(check(r.calls[0], 'receipt')).toMatchObject({ status: 'na' });
    expect(check(r.calls[0], 'receipt').note).toContain('MCP');
    expect(r.ok).toBe(true);
    // Positive control: the same call, once dispatched to a route that is not MCP's, is a finding again.
    const mixed = auditRun(l.events, evidence([dispatchActivity('lc_1_a', mcp), dispatchActivity('lc_1_a', {})]));
    expect(check(mixed.calls[0], 'receipt').status).toBe('missing');
    const http = auditRun(
      l.events,
      evidence([dispatchActivity('lc_1_a', { result: { receipt: undefined }, route: 'POST /v1/x' })]),
    );
    expect(check(http.calls[0], 'receipt').status).toBe('missing');
  });

  test('a history that names another principal than the ledger is a mismatch', () => {
    const l = new Ledger().dispatched('lc_1_a').succeeded('lc_1_a');
    const r = auditRun(l.events, evidence([dispatchActivity('lc_1_a', { intent: { principalId: 'user:mallory' } })]));
    expect(check(r.calls[0], 'principal')).toMatchObject({
      status: 'mismatch',
      ledger: 'user:alice',
      history: ['user:mallory'],
    });
    expect(r.ok).toBe(false);
  });

  test('a dispatched body that does not hash to the recorded arguments hash is a mismatch', () => {
    const l = new Ledger().dispatched('lc_1_a').succeeded('lc_1_a');
    const r = auditRun(
      l.events,
      evidence([dispatchActivity('lc_1_a', { body: { ...body, amount: { minor: 99_999, currency: 'EUR' } } })]),
    );
    expect(check(r.calls[0], 'argumentsHash').status).toBe('mismatch');
    expect(check(r.calls[0], 'argumentsHash').note).toContain('dispatched body hashes to');
  });

  test('a fence or worker the activity result does not report is a mismatch', () => {
    const l = new Ledger().dispatched('lc_1_a').succeeded('lc_1_a');
    const r = auditRun(
      l.events,
      evidence([dispatchActivity('lc_1_a', { result: { fence: 2001, workerIdentity: 'someone-else' } })]),
    );
    expect(check(r.calls[0], 'fence').status).toBe('mismatch');
    expect(check(r.calls[0], 'workerIdentity').status).toBe('mismatch');
  });

  test('a Temporal worker identity that differs from the self-reported one is a warning, not a finding', () => {
    const l = new Ledger().dispatched('lc_1_a').succeeded('lc_1_a');
    const r = auditRun(l.events, evidence([dispatchActivity('lc_1_a', { started: '4242@otherhost' })]));
    expect(check(r.calls[0], 'workerIdentity')).toMatchObject({ status: 'warn', ledger: WORKER });
    expect(r.ok).toBe(true);
  });

  test('an intent whose key differs from ArgumentsCanonicalized is a mismatch inside the ledger', () => {
    const l = new Ledger().dispatched('lc_1_a', { operationKey: 'op_other' }).succeeded('lc_1_a');
    const r = auditRun(l.events, evidence([dispatchActivity('lc_1_a', { intent: { operationKey: 'op_other' } })]));
    expect(check(r.calls[0], 'operationKey')).toMatchObject({
      status: 'mismatch',
      note: `ArgumentsCanonicalized says ${KEY}`,
    });
  });
});

describe('audit of settled-otherwise and unsettled calls', () => {
  test('an operator resolution: the receipt comes from the update, the worker from ActivityTaskStarted, the fence is missing', () => {
    const l = new Ledger()
      .dispatched('lc_1_a')
      .add({ type: 'ToolOutcomeMarkedUnknown', logicalCallId: 'lc_1_a', cause: 'timeout', attempts: 2 })
      .add({
        type: 'ToolEffectReconciled',
        logicalCallId: 'lc_1_a',
        via: 'operator',
        outcome: 'SUCCEEDED',
        receipt: 'stmt-42',
        detail: 'ops:bob: statement',
      });
    const update: UpdateEvidence = {
      name: 'resolveCall',
      updateId: 'u1',
      input: {
        logicalCallId: 'lc_1_a',
        outcome: 'SUCCEEDED',
        operator: 'ops:bob',
        reason: 'statement',
        receipt: 'stmt-42',
      },
    };
    const r = auditRun(l.events, evidence([dispatchActivity('lc_1_a', { closedAs: 'timed_out' })], [update]));
    const c = r.calls[0]!;
    expect(c.state).toBe('SUCCEEDED');
    expect(check(c, 'receipt')).toMatchObject({ status: 'ok', ledger: 'stmt-42', history: ['stmt-42'] });
    expect(check(c, 'workerIdentity')).toMatchObject({ status: 'ok', history: [WORKER] });
    expect(check(c, 'fence')).toMatchObject({ status: 'missing', note: expect.stringContaining('operator') });
    expect(r.ok).toBe(false);
  });

  test('a call the downstream rejected has no receipt to name, but its fence and worker are on record', () => {
    const l = new Ledger().dispatched('lc_1_a').add({
      type: 'ToolResultRecorded',
      logicalCallId: 'lc_1_a',
      state: 'FAILED',
      attempts: 1,
      errorCode: 'Wallet.InsufficientFunds',
      replayed: false,
      fence: 1001,
      workerIdentity: WORKER,
    });
    const r = auditRun(
      l.events,
      evidence([dispatchActivity('lc_1_a', { result: { outcome: 'rejected', receipt: undefined } })]),
    );
    expect(check(r.calls[0], 'receipt').status).toBe('na');
    expect(check(r.calls[0], 'fence').status).toBe('ok');
    expect(r.ok).toBe(true);
  });

  test('a call still UNKNOWN has no settled outcome: a finding', () => {
    const l = new Ledger()
      .dispatched('lc_1_a')
      .add({ type: 'ToolOutcomeMarkedUnknown', logicalCallId: 'lc_1_a', cause: 'timeout', attempts: 3 });
    const r = auditRun(l.events, evidence([dispatchActivity('lc_1_a', { closedAs: 'timed_out' })]));
    expect(check(r.calls[0], 'receipt')).toMatchObject({ status: 'missing', note: 'the outcome is still UNKNOWN' });
    expect(check(r.calls[0], 'fence').status).toBe('na');
  });

  test('a dispatch in the history that the ledger never recorded is audited, and fails', () => {
    const l = new Ledger().dispatched('lc_1_a').succeeded('lc_1_a');
    const r = auditRun(l.events, evidence([dispatchActivity('lc_1_a'), dispatchActivity('lc_9_ghost')]));
    const ghost = r.calls.find((c) => c.logicalCallId === 'lc_9_ghost')!;
    expect(ghost.state).toBe('?');
    expect(check(ghost, 'principal')).toMatchObject({ status: 'missing', history: ['user:alice'] });
    expect(r.ok).toBe(false);
  });

  test('rejected proposals never reached dispatch: nothing to audit', () => {
    const l = new Ledger()
      .add({
        type: 'ToolProposalRecorded',
        turn: 1,
        logicalCallId: 'lc_1_a',
        providerCallId: 'c',
        toolName: 'wallet_debit',
        origin: 'model',
      })
      .add({ type: 'ProposalRejected', logicalCallId: 'lc_1_a', code: 'Proposal.Malformed', message: 'bad' });
    expect(auditRun(l.events, evidence([]))).toEqual({ ok: true, problems: 0, calls: [], notes: [] });
  });

  test('a payload the history holds but nobody can decode is a finding', () => {
    const l = new Ledger().dispatched('lc_1_a').succeeded('lc_1_a');
    const undecodable: ActivityEvidence = { activityType: 'dispatchTool', activityId: '7', decodeError: 'no key k2' };
    const r = auditRun(l.events, evidence([undecodable]));
    expect(r.ok).toBe(false);
    expect(r.notes[0]).toContain('no key k2');
    expect(check(r.calls[0], 'principal')).toMatchObject({ status: 'missing', note: 'not found in the raw history' });
  });
});

describe('history evidence', () => {
  test('reads decoded activity inputs and results, the started identity and accepted update arguments', async () => {
    const converter = loadDataConverter();
    const input = { intent: intentFor('lc_1_a'), body };
    const result = { receipt: 'wd_1', fence: 1001, workerIdentity: WORKER };
    const history = temporal.api.history.v1.History.fromObject({
      events: [
        {
          eventId: 5,
          activityTaskScheduledEventAttributes: {
            activityId: '5',
            activityType: { name: 'dispatchTool' },
            input: { payloads: await encodeToPayloads(converter, input) },
          },
        },
        { eventId: 6, activityTaskStartedEventAttributes: { scheduledEventId: 5, identity: '123@host', attempt: 2 } },
        {
          eventId: 7,
          activityTaskCompletedEventAttributes: {
            scheduledEventId: 5,
            result: { payloads: await encodeToPayloads(converter, result) },
          },
        },
        {
          eventId: 8,
          activityTaskScheduledEventAttributes: { activityId: '8', activityType: { name: 'reconcileCall' } },
        },
        { eventId: 9, activityTaskTimedOutEventAttributes: { scheduledEventId: 8 } },
        {
          eventId: 10,
          workflowExecutionUpdateAcceptedEventAttributes: {
            acceptedRequest: {
              meta: { updateId: 'u1' },
              input: {
                name: 'resolveCall',
                args: { payloads: await encodeToPayloads(converter, { logicalCallId: 'lc_1_a' }) },
              },
            },
          },
        },
      ],
    });
    const e = await historyEvidence(history, converter);
    expect(e.eventCount).toBe(6);
    expect(e.activities[0]).toMatchObject({
      activityType: 'dispatchTool',
      input,
      result,
      startedIdentity: '123@host',
      attempt: 2,
      closedAs: 'completed',
    });
    expect(e.activities[1]).toMatchObject({ activityType: 'reconcileCall', closedAs: 'timed_out' });
    expect(e.activities[1]!.input).toBeUndefined();
    expect(e.updates).toEqual([{ name: 'resolveCall', updateId: 'u1', input: { logicalCallId: 'lc_1_a' } }]);
  });
});
