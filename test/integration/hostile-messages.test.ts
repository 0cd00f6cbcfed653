/**
 * No message can fail a workflow task (issue 28, item 2), on a real dev server. Each case sends one hostile
 * signal, update or query to a run that waits for a human approval, then proves the run goes on: no workflow task
 * failed, the `ledger` query answers, and a valid approval is accepted and the run completes (the positive control
 * beside each refusal: a run frozen by the hostile message could do none of that).
 *
 * The hostile payloads are written byte for byte by a client whose codec replaces every payload it sends (what
 * anyone with namespace access can do with any SDK or the CLI): plain JSON to a worker whose codec is strict, junk
 * labelled `binary/encrypted` to a worker with keys and to one without, a payload over the size limit, a signal
 * name the workflow does not know, and a `ledger` query whose argument has the wrong shape.
 */
import { randomBytes } from 'node:crypto';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { DataConverter, Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { Worker } from '@temporalio/worker';
import type { Stack } from '../../lab/stack';
import { ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../../src/codec/aes-gcm-codec';
import { codecFromEnv, generateCodecKeys } from '../../src/codec/data-converter';
import { readLedger, startAgentRun } from '../../host/client/runs';
import { Failure } from '../../src/domain/failures';
import { decideApprovalUpdate, pendingApprovalsQuery, type PendingApproval } from '../../workflows/definitions';
import { input } from '../helpers/run';
import { inProcessWorker, startTestStack, taskQueue } from '../helpers/stack';

jest.setTimeout(180_000);
// Two CI runs on 2 loaded cores (2026-12-02) saw a query here time out on the server before any worker polled it
// (DEADLINE_EXCEEDED), once in an attack and once in the control that follows it; alone the file passes. A failing
// test is retried once with its first error logged; two failures still fail CI.
jest.retryTimes(1, { logErrorsBeforeRetry: true });

const EventType = temporal.api.enums.v1.EventType;
const { keys, keyId } = generateCodecKeys('hostile');
const strictCodec = codecFromEnv({
  LEDGERLOOP_CODEC_KEYS: keys,
  LEDGERLOOP_CODEC_KEY_ID: keyId,
  LEDGERLOOP_CODEC_STRICT: '1',
})!;
const strictConverter: DataConverter = { payloadCodecs: [strictCodec] };

let stack: Stack;
beforeAll(async () => {
  // The stack's own client sends plain JSON (no codec); the strict runs use a client of their own.
  stack = await startTestStack('hostile', { dataConverter: {} });
  await stack.walletClient.seedAccount({
    tenant: 'acme',
    account: 'acct_h',
    balanceMinor: 10_000_000,
    currency: 'EUR',
  });
});
afterAll(async () => {
  await stack?.stop();
});

type WorkerKind = 'strict' | 'plain';

function clientFor(kind: WorkerKind, dataConverter?: DataConverter): Client {
  const converter = dataConverter ?? (kind === 'strict' ? strictConverter : undefined);
  return new Client({
    connection: stack.connection,
    namespace: stack.server.namespace,
    ...(converter ? { dataConverter: converter } : {}),
  });
}

/** A client that sends `craft(payload)` in place of every payload it would have sent. */
function hostileClient(craft: (p: Payload) => Payload): Client {
  return clientFor('plain', {
    payloadCodecs: [{ encode: async (ps) => ps.map(craft), decode: async (ps) => ps }],
  });
}

const plainJson = (value: unknown): Payload => ({
  metadata: { encoding: new TextEncoder().encode('json/plain') },
  data: new TextEncoder().encode(JSON.stringify(value)),
});
const junkEncrypted = (): Payload => ({
  metadata: {
    encoding: new TextEncoder().encode(ENCRYPTED_ENCODING),
    [KEY_ID_METADATA]: new TextEncoder().encode(keyId),
  },
  data: randomBytes(96),
});

async function waitPending(handle: WorkflowHandle): Promise<PendingApproval> {
  for (const end = Date.now() + 30_000; Date.now() < end;) {
    const pending = await handle.query(pendingApprovalsQuery).catch(() => []);
    if (pending[0]) return pending[0];
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('no pending approval within 30 s');
}

/**
 * The history's events from `fromId` on, once a workflow task after it has completed or failed, or after `ms`. A
 * signal is written to history and answered by a task; a refused update or query leaves no event at all.
 */
async function afterNextTask(
  handle: WorkflowHandle,
  fromId: number,
  ms: number,
): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  let events: temporal.api.history.v1.IHistoryEvent[] = [];
  for (const end = Date.now() + ms; Date.now() < end;) {
    events = ((await handle.fetchHistory()).events ?? []).filter((e) => Number(e.eventId) >= fromId);
    const done = events.some(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED ||
        e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
    );
    if (done) return events;
    await new Promise((r) => setTimeout(r, 200));
  }
  return events;
}

async function lastEventId(handle: WorkflowHandle): Promise<number> {
  const events = (await handle.fetchHistory()).events ?? [];
  return Number(events.at(-1)?.eventId ?? 0);
}

const failedTasks = (events: readonly temporal.api.history.v1.IHistoryEvent[]) =>
  events
    .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)
    .map((e) => e.workflowTaskFailedEventAttributes?.failure?.message ?? '?');

/** What a hostile message came to: an error (a typed refusal), or nothing said (a signal's fate is in history). */
interface Sent {
  readonly error?: unknown;
}

/** The error's message and its causes' messages, one per line. */
function messages(sent: Sent): string {
  const out: string[] = [];
  for (let e = sent.error as { message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e)
    out.push(String(e.message));
  return out.join('\n');
}

/** The failure type the error or one of its causes carries. */
function failureType(sent: Sent): string | undefined {
  for (let e = sent.error as { type?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e)
    if (typeof e.type === 'string') return e.type;
  return undefined;
}

async function settle(p: Promise<unknown>, ms = 60_000): Promise<Sent> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Sent>((resolve) => {
    timer = setTimeout(() => resolve({ error: new Error(`no answer within ${ms} ms`) }), ms);
  });
  try {
    return await Promise.race([
      p.then(
        () => ({}),
        (error: unknown) => ({ error }),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One run of `kind` waiting for approval of a 600 EUR debit; `attack` sends the hostile message. Then the positive
 * controls: no failed workflow task, the ledger answers, a valid approval is accepted, the run completes and the
 * wallet is debited once.
 */
async function underAttack(
  name: string,
  kind: WorkerKind,
  attack: (workflowId: string, handle: WorkflowHandle) => Promise<Sent>,
  opts: { readonly signal?: boolean } = {},
): Promise<{ sent: Sent; events: temporal.api.history.v1.IHistoryEvent[] }> {
  const tq = taskQueue(name);
  const worker: Worker = await inProcessWorker(
    stack,
    tq,
    undefined,
    kind === 'strict' ? { dataConverter: strictConverter } : { dataConverter: {} },
  );
  const client = clientFor(kind);
  const workflowId = `${name}-${Date.now()}`;
  return worker.runUntil(async () => {
    const handle = await startAgentRun(client, {
      workflowId,
      taskQueue: tq,
      input: input({ vars: { account: 'acct_h', amount: { minor: 60_000, currency: 'EUR' } } }),
      identityToken: await stack.identity.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
    });
    const pending = await waitPending(handle);
    const from = await lastEventId(handle);
    const sent = await attack(workflowId, handle);
    const events = await afterNextTask(handle, from + 1, opts.signal ? 20_000 : 1_000);
    // The controls: the run still answers and still decides.
    expect(failedTasks(events)).toEqual([]);
    const ledger = await readLedger(handle);
    expect(ledger.events.map((e) => e.type)).toContain('ApprovalRequested');
    const decided = await handle.executeUpdate(decideApprovalUpdate, {
      args: [
        {
          logicalCallId: pending.logicalCallId,
          argumentsHash: pending.argumentsHash,
          policyVersion: pending.policyVersion,
          token: await stack.identity.issueFor(
            { purpose: 'approve', run: workflowId, call: pending.logicalCallId },
            'manager:carol',
            'acme',
            ['approver'],
          ),
          decision: 'approve',
        },
      ],
    });
    expect(decided).toMatchObject({ accepted: true, approver: 'manager:carol' });
    const result = await handle.result();
    expect(result.stopReason).toBe('completed');
    expect(result.calls.map((c) => c.state)).toEqual(['SUCCEEDED']);
    const key = result.calls[0]!.operationKey!;
    expect((await stack.walletClient.stats(key, { prefix: true })).businessEffectCount).toBe(1);
    const all = (await handle.fetchHistory()).events ?? [];
    expect(failedTasks(all)).toEqual([]);
    return { sent, events };
  });
}

describe('plaintext sent to a strict worker', () => {
  const plain = () => clientFor('plain');

  test('a plaintext signal is ignored; the run answers and accepts a valid approval', async () => {
    const { events } = await underAttack(
      'plain-signal',
      'strict',
      (id) => settle(plain().workflow.getHandle(id).signal('decideApproval', { decision: 'approve' })),
      { signal: true },
    );
    expect(events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)).toBe(true);
  });

  test('a plaintext approval update is refused as undecodable (typed); the valid one is accepted after it', async () => {
    const { sent } = await underAttack('plain-update', 'strict', (id) =>
      settle(
        plain()
          .workflow.getHandle(id)
          .executeUpdate('decideApproval', { args: [{ decision: 'approve' }] }),
      ),
    );
    expect(failureType(sent)).toBe(Failure.MessageUndecodable);
  });

  test('a plaintext ledger query is refused as undecodable (typed); the run goes on', async () => {
    const { sent } = await underAttack('plain-query', 'strict', (id) =>
      settle(plain().workflow.getHandle(id).query('ledger', 3)),
    );
    expect(messages(sent)).toMatch(/could not be decoded/);
  });
});

describe.each<WorkerKind>(['strict', 'plain'])('junk labelled binary/encrypted, to a %s worker', (kind) => {
  const junk = () => hostileClient(junkEncrypted);

  test('a junk signal is ignored; the run answers and accepts a valid approval', async () => {
    const { events } = await underAttack(
      `junk-signal-${kind}`,
      kind,
      (id) => settle(junk().workflow.getHandle(id).signal('decideApproval', 'x')),
      { signal: true },
    );
    expect(events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)).toBe(true);
  });

  test('a junk approval update is refused as undecodable (typed); the valid one is accepted after it', async () => {
    const { sent } = await underAttack(`junk-update-${kind}`, kind, (id) =>
      settle(
        junk()
          .workflow.getHandle(id)
          .executeUpdate('decideApproval', { args: ['x'] }),
      ),
    );
    expect(failureType(sent)).toBe(Failure.MessageUndecodable);
  });

  test('a junk ledger query is refused (typed); the run goes on', async () => {
    const { sent } = await underAttack(`junk-query-${kind}`, kind, (id) =>
      settle(junk().workflow.getHandle(id).query('ledger', 1)),
    );
    expect(messages(sent)).toMatch(/could not be decoded/);
  });
});

describe('JSON nested 100,000 deep (200 KB, under the size limit), to a plain worker', () => {
  // JSON.parse reads it; every walk the workflow makes over it would overflow the stack. The guard refuses it first.
  const deepJson = (): Payload => ({
    metadata: { encoding: new TextEncoder().encode('json/plain') },
    data: new TextEncoder().encode(`${'['.repeat(100_000)}${']'.repeat(100_000)}`),
  });
  const deep = () => hostileClient(deepJson);

  test('a deep signal is ignored; the run answers and accepts a valid approval', async () => {
    const { events } = await underAttack(
      'deep-signal',
      'plain',
      (id) => settle(deep().workflow.getHandle(id).signal('decideApproval', 'x')),
      { signal: true },
    );
    expect(events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)).toBe(true);
  });

  test('a deep approval update is refused as undecodable (typed); the valid one is accepted after it', async () => {
    const { sent } = await underAttack('deep-update', 'plain', (id) =>
      settle(
        deep()
          .workflow.getHandle(id)
          .executeUpdate('decideApproval', { args: ['x'] }),
      ),
    );
    expect(failureType(sent)).toBe(Failure.MessageUndecodable);
    expect(messages(sent)).toMatch(/too-deep/);
  });

  test('a deep ledger query is refused (typed); the run goes on', async () => {
    const { sent } = await underAttack('deep-query', 'plain', (id) =>
      settle(deep().workflow.getHandle(id).query('ledger', 1)),
    );
    expect(messages(sent)).toMatch(/could not be decoded by this worker \(too-deep/);
  });
});

describe('payloads over the size limit', () => {
  const big = 'x'.repeat(3 * 1024 * 1024);

  /** An approval of the pending call whose `reason` is `reason`, sent by `client`. */
  async function approveWithReason(client: Client, id: string, handle: WorkflowHandle, reason: string): Promise<Sent> {
    const pending = await waitPending(handle);
    const { logicalCallId, argumentsHash, policyVersion } = pending;
    const scope = { purpose: 'approve', run: id, call: logicalCallId } as const;
    const token = await stack.identity.issueFor(scope, 'manager:carol', 'acme', ['approver']);
    return settle(
      client.workflow.getHandle(id).executeUpdate(decideApprovalUpdate, {
        args: [{ logicalCallId, argumentsHash, policyVersion, token, decision: 'approve', reason }],
      }),
    );
  }

  test('a 3 MB approval update is refused by the server before any workflow task sees it; a valid one is accepted after it', async () => {
    // A client that does not retry: a default client retries RESOURCE_EXHAUSTED for about 40 s, then sees the same.
    const connection = await Connection.connect({ address: stack.server.address, interceptors: [] });
    try {
      const noRetry = new Client({ connection, namespace: stack.server.namespace });
      const { sent, events } = await underAttack('big-update', 'plain', (id, handle) =>
        approveWithReason(noRetry, id, handle, big),
      );
      expect(messages(sent)).toMatch(
        /limit on total payload size of in-flight updates has been reached \(262144 bytes\)/,
      );
      expect(events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)).toBe(false);
    } finally {
      await connection.close();
    }
  });

  test('the control: a 200 KB approval passes the server and is refused by the run itself (Approval.Invalid)', async () => {
    const { sent } = await underAttack('under-limit-update', 'plain', (id, handle) =>
      approveWithReason(clientFor('plain'), id, handle, 'x'.repeat(200 * 1024)),
    );
    expect(failureType(sent)).toBe(Failure.ApprovalInvalid);
    expect(messages(sent)).toMatch(/reason must be a non-empty string of at most 2000 characters/);
  });

  test('a 3 MB signal is refused by the frontend; nothing reaches the history', async () => {
    const { sent, events } = await underAttack('big-signal', 'plain', (id) =>
      settle(clientFor('plain').workflow.getHandle(id).signal('decideApproval', big)),
    );
    expect(messages(sent)).toMatch(/Blob data size exceeds limit/);
    expect(events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)).toBe(false);
  });

  test('a 3 MB query argument is refused by the frontend; the run goes on', async () => {
    const { sent } = await underAttack('big-query', 'plain', (id) =>
      settle(clientFor('plain').workflow.getHandle(id).query('ledger', big)),
    );
    expect(messages(sent)).toMatch(/Blob data size exceeds limit/);
  });
});

describe('names and shapes the workflow does not expect', () => {
  test('a signal of an unknown name is ignored; the run answers and accepts a valid approval', async () => {
    const { events } = await underAttack(
      'unknown-signal',
      'plain',
      (id) =>
        settle(clientFor('plain').workflow.getHandle(id).signal('pleaseApproveEverything', { decision: 'approve' })),
      { signal: true },
    );
    expect(events.some((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)).toBe(true);
  });

  test('a ledger query whose argument is not a count of events is refused (typed); a valid one answers', async () => {
    const { sent } = await underAttack('bad-upto', 'plain', (id) =>
      settle(
        hostileClient(() => plainJson({ upTo: 'all' }))
          .workflow.getHandle(id)
          .query('ledger', 0),
      ),
    );
    expect(messages(sent)).toMatch(/upTo/);
  });
});
