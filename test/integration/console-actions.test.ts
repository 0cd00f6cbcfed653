/**
 * What the console does where no live run can (workflows/console-actions.workflow.ts), through the console's API:
 * a run terminated after its first debit committed leaves that debit standing; the console lists it, looks it up
 * by key, and settles it (lookup with seal, then the refund the run registered, authorized at dispatch) for an
 * operator, and refuses anyone else with the workflow's typed reason before anything is sent. A body that does
 * not hash to the recorded intent is refused with nothing sent.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { Worker } from '@temporalio/worker';
import type { Stack } from '../../lab/stack';
import type { RunningConsole } from '../../console/server';
import type { InboxItem } from '../../console/inbox';
import { settlementId } from '../../console/abandoned';
import { startAgentRun, readLedger } from '../../host/client/runs';
import type { ToolIntent } from '../../src/domain/operation-key';
import { pendingApprovalsQuery } from '../../workflows/definitions';
import { deadlineIn, inProcessWorker, startTestStack, taskQueue } from '../helpers/stack';
import { input } from '../helpers/run';
import { signIn, startTestConsole, waitFor, type ConsoleClient } from '../helpers/console';

jest.setTimeout(150_000);

let stack: Stack;
let worker: Worker;
let running: Promise<void>;
let consoleServer: RunningConsole;
let tq: string;
const ACCOUNT = `acct_ca${Date.now().toString(36)}`;
const START = 1_000_000;

beforeAll(async () => {
  stack = await startTestStack('console-actions');
  await stack.walletClient.seedAccount({ tenant: 'acme', account: ACCOUNT, balanceMinor: START, currency: 'EUR' });
  tq = taskQueue('console-actions');
  worker = await inProcessWorker(stack, tq);
  running = worker.run();
  consoleServer = await startTestConsole(stack);
});
afterAll(async () => {
  await consoleServer?.close();
  worker?.shutdown();
  await running;
  await stack?.stop();
});

const token = (principal: string, roles: string[] = []) => stack.identity.issue(principal, 'acme', roles);
const balance = async () => (await stack.walletClient.balance('acme', ACCOUNT))?.minor;

test('a terminated run’s standing debit is looked up and refunded for an operator, and refused for anyone else', async () => {
  // Debit 1 (12.00 EUR) commits; debit 2 (600.00 EUR) waits for approval; then the run is terminated.
  const handle = await startAgentRun(stack.client, {
    workflowId: `abandoned-${Date.now()}`,
    taskQueue: tq,
    input: input({
      scenario: 'two-debits',
      vars: {
        account: ACCOUNT,
        amount: { minor: 1_200, currency: 'EUR' },
        amount2: { minor: 60_000, currency: 'EUR' },
      },
      deadlineAt: deadlineIn(120_000),
    }),
    identityToken: (run) => stack.identity.issueFor({ purpose: 'start', run }, 'user:alice', 'acme'),
  });
  await waitFor(async () => ((await handle.query(pendingApprovalsQuery)).length ? true : undefined));
  expect(await balance()).toBe(START - 1_200);
  await handle.terminate('the console test abandons it');
  const runId = (await handle.describe()).runId;

  const [bob, alice, viewer] = await Promise.all([
    signIn(consoleServer, await token('ops:bob', ['operator'])),
    signIn(consoleServer, await token('user:alice', [])),
    signIn(consoleServer, await token('audit:vera', ['viewer'])),
  ]);
  const listed = async (c: ConsoleClient) =>
    ((await (await c.get('/api/inbox')).json()) as { items: InboxItem[] }).items.filter(
      (i) => i.kind === 'abandoned' && i.runId === runId,
    );
  const [item] = await waitFor(async () => ((await listed(bob)).length ? listed(bob) : undefined));
  expect(item).toMatchObject({
    tool: 'wallet_debit',
    amount: '12.00 EUR',
    state: 'SUCCEEDED',
    closedAs: 'TERMINATED',
    actions: ['settle', 'lookup'],
  });
  expect(await listed(viewer)).toMatchObject([{ actions: [] }]);
  const path = (a: string) => `/api/runs/${encodeURIComponent(handle.workflowId)}/${a}`;
  const ids = { runId, logicalCallId: item!.logicalCallId };

  // "Look it up now": the wallet holds the debit under its key (nothing sealed, nothing recorded).
  const looked = (await (await bob.post(path('lookup'), ids)).json()) as { ok: boolean; message: string };
  expect(looked).toMatchObject({ ok: true, message: expect.stringContaining('the effect exists, receipt') });
  // The viewer's lookup is refused by the lookup workflow itself (an operator action).
  expect(await (await viewer.post(path('lookup'), ids)).json()).toMatchObject({ type: 'Actor.Forbidden' });

  // Alice (no operator role) and the viewer are refused by the settlement workflow itself: nothing is sent.
  for (const who of [alice, viewer]) {
    const refused = await who.post(path('settle'), { ...ids, reason: 'not mine to settle' });
    expect(refused.status).toBe(422);
    expect(await refused.json()).toMatchObject({ type: 'Actor.Forbidden' });
  }
  expect(await balance()).toBe(START - 1_200);

  // Positive control: bob settles; the key is looked up (sealed if absent) and the registered refund offsets it.
  const settled = (await (
    await bob.post(path('settle'), { ...ids, reason: 'the run was terminated mid-turn' })
  ).json()) as {
    ok: boolean;
    result: { outcome: string; actor: { principalId: string }; compensation?: { outcome: string; toolName: string } };
  };
  expect(settled).toMatchObject({
    ok: true,
    result: {
      outcome: 'offset',
      actor: { principalId: 'ops:bob' },
      compensation: { outcome: 'OFFSET', toolName: 'wallet_refund' },
    },
  });
  expect(await balance()).toBe(START);
  // The refund is the one the run registered: same key as its CompensationRegistered.
  const registered = (await readLedger(stack.client.workflow.getHandle(handle.workflowId, runId))).events.find(
    (e) => e.type === 'CompensationRegistered',
  );
  const refundKey = registered?.type === 'CompensationRegistered' ? registered.operationKey : '';
  expect((await stack.walletClient.stats(refundKey)).businessEffectCount).toBe(1);
  // Settled: the item leaves the inbox.
  await waitFor(async () => ((await listed(bob)).length === 0 ? true : undefined));

  // A body that does not hash to the recorded intent is refused before anything is sent.
  const evidence = (await stack.client.workflow.getHandle(settlementId(runId, item!.logicalCallId)).result()) as {
    logicalCallId: string;
  };
  expect(evidence.logicalCallId).toBe(item!.logicalCallId);
  const err = await stack.client.workflow
    .execute('settleAbandoned', {
      taskQueue: tq,
      workflowId: `tampered-${Date.now()}`,
      args: [
        {
          // A token for exactly this act (the refusal below must be the evidence check's, not the token's).
          token: await stack.identity.issueFor(
            { purpose: 'resolve', run: handle.workflowId, call: item!.logicalCallId },
            'ops:bob',
            'acme',
            ['operator'],
          ),
          reason: 'tampered',
          run: { workflowId: handle.workflowId, runId },
          intent: forwardIntent(
            await readLedger(stack.client.workflow.getHandle(handle.workflowId, runId)),
            item!.logicalCallId,
          ),
          service: 'wallet',
          body: { tenant: 'acme', account: ACCOUNT, amount: { minor: 99_999, currency: 'EUR' } },
        },
      ],
    })
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause instanceof ApplicationFailure && cause.type).toBe('Console.EvidenceMismatch');
  expect(await balance()).toBe(START);
});

function forwardIntent(ledger: Awaited<ReturnType<typeof readLedger>>, id: string): ToolIntent {
  const e = ledger.events.find((x) => x.type === 'DispatchIntentRecorded' && x.logicalCallId === id);
  if (e?.type !== 'DispatchIntentRecorded') throw new Error('no intent');
  return e.intent;
}
