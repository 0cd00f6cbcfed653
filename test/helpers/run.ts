/** Start one agent run on a test stack with an in-process worker and collect what the durable records say. */
import type { PolicyStore } from '../../src/stores/policy-store';
import type { WorkflowHandle } from '@temporalio/client';
import type { SearchAttributeType, TypedSearchAttributes } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import type { Worker } from '@temporalio/worker';
import { activityAttempts } from '../../host/client/history-metrics';
import { readLedger, startAgentRun } from '../../host/client/runs';
import type { Stack } from '../../lab/stack';
import type { AgentRunInput, AgentRunResult } from '../../src/domain/run';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { deadlineIn, inProcessWorker, taskQueue } from './stack';
import type { IdentitySource } from '../../src/identity/config';
import type { TokenScope } from '../../src/identity/purpose';
import type { ModelProvider } from '../../src/planner/model';
import type { Activities } from '../../activities';

/**
 * A token of the stack's development issuer for an approver, operator or canceller (roles as given), for exactly one
 * act: approve or resolve a call of a run, or cancel a run (src/identity/purpose.ts).
 */
export function actorToken(
  stack: Stack,
  scope: TokenScope,
  principal: string,
  roles: readonly string[],
  tenant = 'acme',
): Promise<string> {
  return stack.identity.issueFor(scope, principal, tenant, roles);
}

/** The run's own start token, minted for the workflow id it is started under. */
export type StartToken = (workflowId: string) => Promise<string>;

export interface RunOutcome {
  readonly result: AgentRunResult;
  readonly ledger: LedgerSnapshot;
  readonly dispatchAttempts: number;
  readonly workflowId: string;
  readonly handle: WorkflowHandle;
}

export function input(
  over: Partial<AgentRunInput> & { vars?: Record<string, unknown>; scenario?: string } = {},
): AgentRunInput {
  const { vars, scenario, ...rest } = over;
  return {
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: 'Charge 12.50 EUR for order 1001',
    strategy: 'same_key_replay',
    planner: {
      kind: 'scripted',
      scenario: scenario ?? 'wallet-debit',
      vars: vars ?? { account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } },
    },
    deadlineAt: deadlineIn(60_000),
    caps: { toolAttemptMs: 3_000, reconcileAttemptMs: 2_000 },
    ...rest,
  };
}

/** Runs to completion; `during` may act on the handle while the worker runs (approve, resolve, ...). */
export async function runAgent(
  stack: Stack,
  name: string,
  runInput: AgentRunInput,
  during?: (handle: WorkflowHandle, worker: Worker) => Promise<void>,
  opts: {
    services?: Record<string, string>;
    policies?: PolicyStore;
    noCapabilityKey?: boolean;
    identity?: IdentitySource;
    /** The start token: a value, one minted for the run's workflow id, or null for none. Default alice's own. */
    identityToken?: string | null | StartToken;
    models?: readonly ModelProvider[];
    activities?: (built: Activities) => Activities;
  } = {},
): Promise<RunOutcome> {
  const tq = taskQueue(name);
  const worker = await inProcessWorker(stack, tq, opts.services, {
    ...(opts.policies ? { policies: opts.policies } : {}),
    ...(opts.noCapabilityKey ? { noCapabilityKey: true } : {}),
    ...(opts.identity ? { identity: opts.identity } : {}),
    ...(opts.models ? { models: opts.models } : {}),
    ...(opts.activities ? { activities: opts.activities } : {}),
  });
  const workflowId = `${name}-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`;
  // The principal's start token for this run from the stack's development issuer, unless the input carries one or
  // the test sets one (null: none).
  const identityToken =
    opts.identityToken === null
      ? undefined
      : typeof opts.identityToken === 'function'
        ? await opts.identityToken(workflowId)
        : (opts.identityToken ??
          runInput.identityToken ??
          (await stack.identity.issueFor(
            { purpose: 'start', run: workflowId },
            runInput.principal.id,
            runInput.principal.tenant,
          )));
  return worker.runUntil(async () => {
    const handle = await startAgentRun(stack.client, {
      workflowId,
      taskQueue: tq,
      input: runInput,
      ...(identityToken !== undefined ? { identityToken } : {}),
    });
    if (during) await during(handle, worker);
    const result = await handle.result();
    const ledger = await readLedger(handle);
    const history = await handle.fetchHistory();
    const dispatchAttempts = activityAttempts(history)
      .filter((a) => a.activityType === 'dispatchTool')
      .reduce((n, a) => n + a.attempts, 0);
    return { result, ledger, dispatchAttempts, workflowId, handle };
  });
}

export function eventTypes(ledger: LedgerSnapshot): string[] {
  return ledger.events.map((e) => e.type);
}

/**
 * The run's search attributes once they show `expected`, or what they show after `ms`.
 * A query can answer from a workflow task the server has not committed yet (a completion it rejects
 * and the worker replays), while `describe` reads only committed state; so a test that saw a state
 * through a query waits for the attributes instead of reading them once. The caller still asserts.
 */
export async function searchAttributesWhen(
  handle: WorkflowHandle,
  key: SearchAttributeKey<SearchAttributeType>,
  expected: unknown,
  ms = 10_000,
): Promise<TypedSearchAttributes> {
  const end = Date.now() + ms;
  for (;;) {
    const attrs = (await handle.describe()).typedSearchAttributes;
    if (attrs.get(key) === expected || Date.now() > end) return attrs;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether `err` is a query the server gave up on because no worker answered it in time (gRPC DEADLINE_EXCEEDED). */
function queryTimedOut(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  return cause?.code === 4;
}

/**
 * The run's ledger once `holds` is true of it, or the last one read after `ms`; the caller still asserts. A query no
 * worker answered in time (a worker busy on a loaded machine) is an unanswered poll, not a state: it is asked again.
 * Any other query error fails the test.
 */
export async function ledgerWhen(
  handle: WorkflowHandle,
  holds: (ledger: LedgerSnapshot) => boolean,
  ms = 60_000,
): Promise<LedgerSnapshot> {
  const end = Date.now() + ms;
  let last: LedgerSnapshot | undefined;
  for (;;) {
    try {
      last = await readLedger(handle);
      if (holds(last)) return last;
    } catch (err) {
      if (!queryTimedOut(err)) throw err;
    }
    if (Date.now() > end) {
      if (last === undefined) throw new Error(`no ledger query of ${handle.workflowId} was answered within ${ms} ms`);
      return last;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
