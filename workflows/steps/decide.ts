/**
 * Step 4 of a call, `decide`: authorize at dispatch. Four stages, in order, each named below:
 *
 *   checks   → the unresolved-call state, the dependency's circuit, the tool-call budget (synchronous)
 *   policy   → the current policy's decision for exactly this call (the held policy; the authorizer if stale)
 *   approval → a human approval bound to the call, when the policy asks for one
 *   quota    → the rate limits: the run's own intents, then the tenant's quota across runs
 *
 * A stage that waits (an approval, a rate limit, the authorizer) sends the call through every stage again
 * afterwards, since the wait may have changed their answers. Only an allowed decision leads on, synchronously,
 * to `recordIntent`; nothing else reaches a downstream. A wait that would pass the deadline throws
 * `DeadlineTooClose`: the call runner settles the call whatever throws (call-runner.ts).
 */
import { condition, sleep } from '@temporalio/workflow';
import { authorizerPreset, DeadlineTooClose } from '../../src/domain/activity-presets';
import { Failure } from '../../src/domain/failures';
import { keyModeFor } from '../../src/domain/retry-strategies';
import {
  authorizationInput as describeCall,
  type ApprovalGrant,
  type AuthorizationDecision,
  type AuthorizationInput,
} from '../../src/domain/authorization';
import { evaluate } from '../../src/policy/evaluate';
import type { Policy, RateLimit } from '../../src/domain/policy-format';
import { longestWindowMs } from '../../src/policy/policy-rules';
import type { Decision, Refused, RunModel, ValidatedCall } from '../model';
import { activities } from '../proxies';
import { QuotaUnavailable, releaseAcrossRuns, reserveAcrossRuns } from '../quota-client';
import { recordIntent } from './record-intent';

type Evaluated = ReturnType<typeof evaluate>;

/**
 * Decide on `call` now. `prior`: a grant an earlier decision for this call rested on (the policy re-checks it:
 * call, version, expiry). A call that took a cross-run slot and is refused before it ever dispatched gives the
 * slot back; one that has dispatched keeps it, since its effect may exist.
 */
export async function decide(run: RunModel, call: ValidatedCall, prior?: ApprovalGrant): Promise<Decision> {
  const quota = { held: false };
  const decision = await decideUntilFinal(run, call, prior, quota);
  const dispatched = (run.ledger.projection.calls[call.logicalCallId]?.dispatches ?? 0) > 0;
  if (!decision.ok && quota.held && !dispatched) {
    const { tenant } = run.who;
    await releaseAcrossRuns({ tenant, runId: run.runId, logicalCallId: call.logicalCallId, clock: run.clock() });
  }
  return decision;
}

/** What deciding now calls for: the decision, or one wait after which the stages run again. */
type Now =
  | { readonly kind: 'final'; readonly decision: Decision }
  | { readonly kind: 'read_policy' }
  | { readonly kind: 'ask_approval'; readonly decision: Extract<Evaluated, { kind: 'approval_required' }> }
  | { readonly kind: 'wait'; readonly retryAfterMs: number; readonly reason: string }
  | { readonly kind: 'reserve'; readonly limits: readonly RateLimit[]; readonly action: string };

/**
 * The stages, again after every wait, until one of them refuses or the call is allowed. Everything from the
 * checks to the recorded intent happens in one synchronous step (`decideNow`): parallel calls of a turn cannot
 * all pass a check or a rate limit made before any of them recorded its intent.
 */
async function decideUntilFinal(
  run: RunModel,
  call: ValidatedCall,
  prior: ApprovalGrant | undefined,
  quota: { held: boolean },
): Promise<Decision> {
  const holdsIntent = run.ledger.projection.calls[call.logicalCallId]?.intentRecorded === true;
  let approval = prior;
  for (;;) {
    const now = decideNow(run, call, holdsIntent, approval, quota);
    if (now.kind === 'final') return now.decision;
    if (now.kind === 'read_policy') {
      const unavailable = await readPolicy(run, call);
      if (unavailable) return unavailable;
    } else if (now.kind === 'ask_approval') {
      const answer = await askApproval(run, call, now.decision);
      if (!answer.ok) return answer;
      approval = answer.grant;
    } else if (now.kind === 'wait') {
      await waitOut(run, call, now.retryAfterMs, now.reason);
    } else {
      const refused = await reserveAcross(run, call, now.limits, now.action, quota);
      if (refused) return refused;
    }
  }
}

/** One synchronous pass: checks → policy → approval → quota, ending in a decision or in the wait it needs. */
function decideNow(
  run: RunModel,
  call: ValidatedCall,
  holdsIntent: boolean,
  approval: ApprovalGrant | undefined,
  quota: { held: boolean },
): Now {
  const refused = checks(run, call, holdsIntent);
  if (refused) return { kind: 'final', decision: refused };
  const held = run.policy.current;
  if (held === undefined) return { kind: 'read_policy' };
  const input = authorizationInput(run, call, held.document, approval);
  const decision = evaluate(held.document, input);
  switch (decision.kind) {
    case 'denied':
      return { kind: 'final', decision: deny(run, call, input, decision) };
    case 'approval_required':
      return { kind: 'ask_approval', decision };
    case 'rate_limited':
      return { kind: 'wait', retryAfterMs: decision.retryAfterMs, reason: decision.reason };
    case 'allowed': {
      const limits = (decision.rateLimits ?? []).filter((l) => l.per !== 'run');
      if (!quota.held && call.origin === 'model' && limits.length > 0)
        return { kind: 'reserve', limits, action: input.request.action };
      return { kind: 'final', decision: allow(run, call, input, decision, approval) };
    }
  }
}

/** Why a check refuses a call, or null. Run in order, synchronously, before every policy decision. */
export type PreDispatchCheck = (
  run: RunModel,
  call: ValidatedCall,
  holdsIntent: boolean,
) => { readonly code: string; readonly message: string } | null;

/** The model may not stack new effects on top of an outcome nobody knows yet. */
const noUnresolvedCalls: PreDispatchCheck = (run, call) => {
  const unresolved = run.ledger.callsIn('UNKNOWN').filter((c) => c !== call.logicalCallId);
  return call.origin === 'model' && unresolved.length > 0
    ? { code: Failure.UnresolvedCall, message: `calls still UNKNOWN: ${unresolved.join(', ')}` }
    : null;
};

/** Repeated failures of a dependency stop new dispatches to it for a while. */
const circuitClosed: PreDispatchCheck = (run, call) => {
  const open = run.breakers.openReason(call.tool.service);
  return open !== null && call.origin === 'model' ? { code: Failure.CircuitOpen, message: open } : null;
};

/** The tool-call budget, reserved before anything is awaited; a call that holds an intent is inside it already. */
const withinBudget: PreDispatchCheck = (run, call, holdsIntent) =>
  call.origin === 'model' && !holdsIntent && !run.reserveIntent(call.logicalCallId)
    ? { code: Failure.BudgetToolCalls, message: 'the run has no tool-call budget left' }
    : null;

/** The checks, in order. A new check goes before `withinBudget`, which reserves. */
export const PRE_DISPATCH_CHECKS: readonly PreDispatchCheck[] = [noUnresolvedCalls, circuitClosed, withinBudget];

/** Stage 1, checks: a refusal is recorded as `ProposalRejected` and goes back to the model. */
function checks(run: RunModel, call: ValidatedCall, holdsIntent: boolean): Refused | null {
  for (const check of PRE_DISPATCH_CHECKS) {
    const refused = check(run, call, holdsIntent);
    if (refused !== null) return reject(run, call, refused.code, refused.message);
  }
  return null;
}

/**
 * Stage 2, policy: the run decides from the policy it holds (from its opening). When that went stale, one call
 * reads the current policy (an activity) and the others wait for its answer; a policy that cannot be read
 * refuses the call (fail closed).
 */
async function readPolicy(run: RunModel, call: ValidatedCall): Promise<Refused | undefined> {
  const holder = run.policy;
  if (holder.fetching) {
    await condition(() => !holder.fetching);
    return undefined;
  }
  holder.fetching = true;
  try {
    holder.hold(await activities.readPolicy.executeWithOptions(authorizerPreset(run.clock(), 'read the policy'), []));
    return undefined;
  } catch (err) {
    if (err instanceof DeadlineTooClose) throw err;
    const why = (err as Error).message;
    return reject(run, call, Failure.PolicyUnavailable, `no authorization decision could be made: ${why}`);
  } finally {
    holder.fetching = false;
  }
}

function authorizationInput(
  run: RunModel,
  call: ValidatedCall,
  policy: Policy,
  approval?: ApprovalGrant,
): AuthorizationInput {
  const nowMs = Date.now();
  return describeCall(call.tool, call.args, run.who, call, {
    ...(approval ? { approval } : {}),
    // The run's own intents of this action within the policy's longest window, never this call's own: a decision
    // taken again counts no attempt.
    recentDispatches: (action) => run.ledger.intentTimes(action, call.logicalCallId, nowMs - longestWindowMs(policy)),
    keyMode: keyModeFor(run.strategy),
    nowMs,
  });
}

/**
 * Stage 3, approval: ask a human for exactly this call and wait, until the run deadline less its reserve. Who may
 * approve, and the TTL cap, come from the policy the decision was made under.
 */
async function askApproval(
  run: RunModel,
  call: ValidatedCall,
  decision: Extract<Evaluated, { kind: 'approval_required' }>,
): Promise<{ readonly ok: true; readonly grant: ApprovalGrant } | Refused> {
  const id = call.logicalCallId;
  run.ledger.append({
    type: 'ApprovalRequested',
    logicalCallId: id,
    argumentsHash: call.argumentsHash,
    policyVersion: decision.policyVersion,
    reason: decision.reason,
    invalidated: decision.invalidated,
  });
  const c = run.clock();
  const outcome = await run.approvals.request(
    {
      logicalCallId: id,
      toolName: call.tool.name,
      summary: call.tool.summary(call.args),
      argumentsHash: call.argumentsHash,
      policyVersion: decision.policyVersion,
      reason: decision.reason,
      requestedAt: decision.issuedAt,
    },
    decision.approvalTtlMs,
    c.deadlineAtMs - c.nowMs - c.caps.recoveryReserveMs,
    { policy: run.policy.current!.document, action: call.tool.authorization(call.args, run.who).action },
  );
  if (outcome === undefined)
    return reject(run, call, Failure.ApprovalTimedOut, 'no approval decision before the run deadline');
  if (outcome.kind === 'denied')
    return refuse(run, call, Failure.ApprovalDenied, `${outcome.approver}: ${outcome.reason}`);
  return { ok: true, grant: outcome.grant };
}

/** A rate limit holds the call back: record it, and wait unless the wait would carry it past the deadline. */
async function waitOut(run: RunModel, call: ValidatedCall, retryAfterMs: number, reason: string): Promise<void> {
  const id = call.logicalCallId;
  run.ledger.append({ type: 'DispatchDeferred', logicalCallId: id, retryAfterMs, reason });
  const c = run.clock();
  if (c.nowMs + retryAfterMs > c.deadlineAtMs - c.caps.recoveryReserveMs)
    throw new DeadlineTooClose(`rate limit would carry ${id} past the run deadline`);
  await sleep(retryAfterMs);
}

/**
 * Stage 4, quota: the run's own limits were counted by the policy; limits per principal or tenant hold across
 * runs, counted by the tenant's quota. A slot taken, or a full window waited out: the stages run again, since an
 * await passed. A quota that cannot be asked refuses the call (fail closed).
 */
async function reserveAcross(
  run: RunModel,
  call: ValidatedCall,
  limits: readonly RateLimit[],
  action: string,
  quota: { held: boolean },
): Promise<Refused | undefined> {
  let across;
  try {
    across = await reserveAcrossRuns({
      ...run.who,
      runId: run.runId,
      logicalCallId: call.logicalCallId,
      action,
      limits,
      clock: run.clock(),
    });
  } catch (err) {
    if (err instanceof QuotaUnavailable) return reject(run, call, Failure.QuotaUnavailable, err.message);
    throw err;
  }
  if (across.ok) quota.held = true;
  else
    await waitOut(run, call, across.retryAfterMs, `${action}: the ${across.scope} rate limit is reached across runs`);
  return undefined;
}

function decisionRecord(call: ValidatedCall, input: AuthorizationInput, decision: Evaluated) {
  const { request } = input;
  return {
    logicalCallId: call.logicalCallId,
    principalId: input.principalId,
    tenant: input.tenant,
    origin: call.origin,
    action: request.action,
    resource: request.resource,
    scope: call.tool.effectScope,
    amountMinor: request.amountMinor,
    currency: request.currency,
    argumentsHash: call.argumentsHash,
    policyVersion: decision.policyVersion,
    issuedAt: decision.issuedAt,
    reason: decision.reason,
  };
}

function deny(
  run: RunModel,
  call: ValidatedCall,
  input: AuthorizationInput,
  decision: Extract<AuthorizationDecision, { kind: 'denied' }>,
): Refused {
  run.ledger.append({ type: 'AuthorizationDenied', ...decisionRecord(call, input, decision), code: decision.code });
  return refuse(run, call, decision.code, decision.reason);
}

function allow(
  run: RunModel,
  call: ValidatedCall,
  input: AuthorizationInput,
  decision: Extract<Evaluated, { kind: 'allowed' }>,
  approval: ApprovalGrant | undefined,
): Decision {
  run.ledger.append({
    type: 'AuthorizationAllowed',
    ...decisionRecord(call, input, decision),
    expiresAt: decision.expiresAt,
    chain: decision.chain,
  });
  return recordIntent(run, call, decision, { input, held: run.policy.current!, approval });
}

function refusal(call: ValidatedCall, code: string, message: string): Refused {
  return {
    ok: false,
    observation: {
      logicalCallId: call.logicalCallId,
      providerCallId: call.providerCallId,
      toolName: call.tool.name,
      state: 'FAILED',
      error: { code, message },
    },
  };
}

/** A refusal the decision records itself (denied, approval denied): the budget reservation goes back. */
function refuse(run: RunModel, call: ValidatedCall, code: string, message: string): Refused {
  run.releaseIntent(call.logicalCallId);
  return refusal(call, code, message);
}

/** A refusal recorded as `ProposalRejected` (a check, the authorizer, the approval wait, the quota). */
function reject(run: RunModel, call: ValidatedCall, code: string, message: string): Refused {
  run.releaseIntent(call.logicalCallId);
  run.ledger.append({ type: 'ProposalRejected', logicalCallId: call.logicalCallId, code, message });
  return refusal(call, code, message);
}
