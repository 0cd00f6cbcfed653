/**
 * Step 4 of a call, `decide`, at the instant of dispatch (pipeline steps 6-8): the unresolved-call check, the
 * dependency's circuit, the dispatch budget, then the current policy's decision, human approval bound to the
 * exact call, rate limits (waiting out a limit, within the deadline) and quotas across runs. Only an allowed
 * decision leads on, synchronously, to `recordIntent`; nothing else reaches a downstream.
 */
import { condition, patched, sleep } from '@temporalio/workflow';
import { activities, authorizeCall } from '../proxies';
import { authorizerPreset, DeadlineTooClose, type DeadlineClock } from '../../src/domain/activity-presets';
import type { Observation } from '../../src/domain/activity-contracts';
import { Failure } from '../../src/domain/failures';
import type { ToolIntent } from '../../src/domain/identity';
import {
  type ApprovalGrant,
  type AuthorizationDecision,
  type AuthorizationInput,
  type DispatchAuthorization,
  type HeldPolicy,
} from '../../src/policy/authorization';
import { evaluate } from '../../src/policy/evaluate';
import type { RetryStrategy } from '../../src/domain/run';
import type { Approvals } from '../approvals';
import type { Ledger } from '../ledger';
import type { ValidatedCall } from './validate';
import { QuotaUnavailable, releaseAcrossRuns, reserveAcrossRuns } from '../quota-client';
import { recordIntent } from './record-intent';
import { keyModeFor } from '../../src/domain/retry-contract';

export interface DispatchGate {
  readonly ledger: Ledger;
  readonly approvals: Approvals;
  readonly runId: string;
  readonly principalId: string;
  readonly tenant: string;
  readonly deadlineAt: string;
  readonly strategy: RetryStrategy;
  readonly clock: () => DeadlineClock;
  /** Workflow times of dispatches per action in this run (rate limits). */
  readonly dispatchTimes: Map<string, number[]>;
  /** Other calls of this run that are UNKNOWN right now. */
  readonly unresolved: (except: string) => string[];
  /**
   * Reserve one intent of the run's tool-call budget for this call (true), or refuse (false). A reservation is
   * taken before any await (authorizer, approval, rate-limit sleep), so parallel proposals cannot all pass a
   * check made before their awaits; it turns into the intent when the intent is recorded, or is released.
   */
  readonly reserveBudget: (callId: string) => boolean;
  readonly releaseBudget: (callId: string) => void;
  /** Why the dependency's circuit is open, or null. */
  readonly circuitOpen?: (service: string) => string | null;
  /** Deciding from a held policy (absent: every decision is the authorizer local activity's, as before). */
  readonly held?: PolicyHolder;
}

/**
 * The policy this run decides from, as the authorizer last returned it. With one held, the workflow evaluates
 * the same pure `evaluate` itself (no local activity, no marker per call) and the dispatch activity signs the
 * decision only while the current policy still has the held digest; a change sends nothing and comes back as
 * `Authorization.Stale`, after which the run forgets the policy and asks the authorizer again.
 */
export class PolicyHolder {
  private policy: HeldPolicy | undefined;
  /** A call of this run is asking the authorizer right now: the others wait for its answer instead of asking too. */
  fetching = false;
  get current(): HeldPolicy | undefined {
    return this.policy;
  }
  hold(p: HeldPolicy): void {
    this.policy = p;
  }
  forget(): void {
    this.policy = undefined;
  }
}

export type GateResult =
  | {
      readonly ok: true;
      readonly intent: ToolIntent;
      readonly intentRecordedAt: string;
      readonly capability?: string;
      /** A decision from the held policy, for the dispatch activity to sign at the instant of sending. */
      readonly authorization?: DispatchAuthorization;
      /** The approval the decision rests on, if any: a new decision for the same call presents it again. */
      readonly approval?: ApprovalGrant;
    }
  | { readonly ok: false; readonly observation: Observation };

/** Patch id: rate limits counted per principal or tenant are reserved across runs (the tenant quota workflow). */
export const QUOTA_ACROSS_RUNS = 'quota-across-runs';
/** Patch id: parallel calls of a run wait for one authorizer call instead of each asking (replay-safe order). */
export const ONE_AUTHORIZER_CALL = 'one-authorizer-call';
/** Patch id: a run that holds policies asks the authorizer as an activity, never as a local activity. */
export const AUTHORIZER_AS_ACTIVITY = 'authorizer-as-activity';

/**
 * Ask the authorizer. A run holds its policy from its opening, so it asks only when that policy went stale (or
 * could not be read); it then asks with an ordinary activity. Core 1.24 once failed a run's workflow task with
 * "Attempted to check for LA marker handling in invalid state MarkerCommandCreated" beside an approval update,
 * and the run made no progress (test/integration/authority.test.ts): a run with no local activity cannot meet
 * that. Runs recorded before this change replay their local activity.
 */
function askAuthorizer(g: DispatchGate, ask: AuthorizationInput & { readonly includePolicy?: boolean }, tool: string) {
  if (g.held && patched(AUTHORIZER_AS_ACTIVITY))
    return activities.authorizeCall.executeWithOptions(authorizerPreset(g.clock(), `authorize ${tool}`), [ask]);
  return authorizeCall(ask);
}

/**
 * `approval`: a grant an earlier decision for this call rested on (the authorizer re-checks it: call, version,
 * expiry). A call that took a cross-run rate-limit slot and is then refused gives the slot back.
 */
export async function decide(g: DispatchGate, call: ValidatedCall, prior?: ApprovalGrant): Promise<GateResult> {
  const quota = { held: false };
  const result = await decideUnderQuota(g, call, prior, quota);
  if (!result.ok && quota.held)
    await releaseAcrossRuns({ tenant: g.tenant, runId: g.runId, logicalCallId: call.logicalCallId, clock: g.clock() });
  return result;
}

/**
 * A check a model's call must pass before the policy is asked; `null` lets it on. A refusal is recorded as
 * `ProposalRejected` and returned to the model. Checks run in order, synchronously, and again after every await.
 */
export type PreDispatchCheck = (
  g: DispatchGate,
  call: ValidatedCall,
  holdsIntent: boolean,
) => { readonly code: string; readonly message: string } | null;

/** 7. unresolved-call state: the model may not stack new effects on top of an outcome nobody knows yet. */
const noUnresolvedCalls: PreDispatchCheck = (g, call) => {
  const unresolved = g.unresolved(call.logicalCallId);
  return call.origin === 'model' && unresolved.length > 0
    ? { code: Failure.UnresolvedCall, message: `calls still UNKNOWN: ${unresolved.join(', ')}` }
    : null;
};

/** The dependency's circuit breaker: repeated failures stop new dispatches to it for a while. */
const circuitClosed: PreDispatchCheck = (g, call) => {
  const open = g.circuitOpen?.(call.tool.service) ?? null;
  return open !== null && call.origin === 'model' ? { code: Failure.CircuitOpen, message: open } : null;
};

/**
 * 8. dispatch budget, reserved before anything is awaited (last: it takes a place in the budget). A call that
 * already holds an intent (a new decision for it) is inside the budget already.
 */
const withinBudget: PreDispatchCheck = (g, call, holdsIntent) =>
  call.origin === 'model' && !holdsIntent && !g.reserveBudget(call.logicalCallId)
    ? { code: Failure.BudgetToolCalls, message: 'the run has no tool-call budget left' }
    : null;

/** The pre-dispatch checks, in order. A new check goes here (before `withinBudget`, which reserves). */
export const PRE_DISPATCH_CHECKS: readonly PreDispatchCheck[] = [noUnresolvedCalls, circuitClosed, withinBudget];

/** A rate limit holds the call back: record it, and wait unless the wait would carry the call past the deadline. */
async function defer(g: DispatchGate, id: string, retryAfterMs: number, reason: string): Promise<void> {
  g.ledger.append({ type: 'DispatchDeferred', logicalCallId: id, retryAfterMs, reason });
  const c = g.clock();
  if (c.nowMs + retryAfterMs > c.deadlineAtMs - c.caps.recoveryReserveMs) {
    g.releaseBudget(id);
    throw new DeadlineTooClose(`rate limit would carry ${id} past the run deadline`);
  }
  await sleep(retryAfterMs);
}

async function decideUnderQuota(
  g: DispatchGate,
  call: ValidatedCall,
  prior: ApprovalGrant | undefined,
  quota: { held: boolean },
): Promise<GateResult> {
  const { ledger } = g;
  const id = call.logicalCallId;
  const who = { tenant: g.tenant, principalId: g.principalId };
  const authz = call.tool.authorization(call.args, who);
  const fail = (code: string, message: string): GateResult => ({
    ok: false,
    observation: {
      logicalCallId: id,
      providerCallId: call.providerCallId,
      toolName: call.tool.name,
      state: 'FAILED',
      error: { code, message },
    },
  });
  const reject = (code: string, message: string): GateResult => {
    g.releaseBudget(id);
    ledger.append({ type: 'ProposalRejected', logicalCallId: id, code, message });
    return fail(code, message);
  };
  const refuse = (code: string, message: string): GateResult => {
    g.releaseBudget(id);
    return fail(code, message);
  };
  const holdsIntent = ledger.projection.calls[id]?.intentRecorded === true;
  let approval: ApprovalGrant | undefined = prior;

  for (;;) {
    // Checked again each time round: an await (authorizer, approval, rate limit) may have changed the answer.
    for (const check of PRE_DISPATCH_CHECKS) {
      const refused = check(g, call, holdsIntent);
      if (refused !== null) return reject(refused.code, refused.message);
    }

    // 6. authorization and approval, against the policy as it is now
    const input: AuthorizationInput = {
      principalId: g.principalId,
      tenant: g.tenant,
      logicalCallId: id,
      operationKey: call.operationKey,
      argumentsHash: call.argumentsHash,
      toolName: call.tool.name,
      scope: call.tool.effectScope,
      request: authz,
      origin: call.origin,
      toolApprovalReason: call.tool.approval?.(call.args, who) ?? null,
      ...(approval ? { approval } : {}),
      recentDispatches: g.dispatchTimes.get(authz.action) ?? [],
      keyMode: keyModeFor(g.strategy),
      nowMs: Date.now(),
    };
    let decision: AuthorizationDecision;
    const held = g.held?.current;
    if (held) {
      // The held policy, evaluated here at workflow time: deterministic, and re-checked by the dispatch activity.
      decision = evaluate(held.document, input);
    } else if (g.held?.fetching && patched(ONE_AUTHORIZER_CALL)) {
      // Parallel calls share one authorizer call: local activities resolved side by side replay in another order
      // than they ran (a nondeterminism), and one answer carries the policy for all of them anyway.
      await condition(() => !g.held!.fetching);
      continue;
    } else {
      if (g.held) g.held.fetching = true;
      try {
        const result = await askAuthorizer(g, g.held ? { ...input, includePolicy: true } : input, call.tool.name);
        const { policy, ...rest } = result;
        if (policy) {
          // Decide again from the policy now held, synchronously: parallel calls that awaited the authorizer
          // together would otherwise all pass a rate limit and the checks above as they stood before the await.
          g.held?.hold(policy);
          continue;
        }
        decision = rest;
      } catch (err) {
        return reject('Policy.Unavailable', `no authorization decision could be made: ${(err as Error).message}`);
      } finally {
        if (g.held) g.held.fetching = false;
      }
    }
    const record = {
      logicalCallId: id,
      principalId: g.principalId,
      tenant: g.tenant,
      origin: call.origin,
      action: authz.action,
      resource: authz.resource,
      scope: call.tool.effectScope,
      ...(authz.amountMinor !== undefined ? { amountMinor: authz.amountMinor } : {}),
      ...(authz.currency !== undefined ? { currency: authz.currency } : {}),
      argumentsHash: call.argumentsHash,
      policyVersion: decision.policyVersion,
      issuedAt: decision.issuedAt,
      reason: decision.reason,
    };
    switch (decision.kind) {
      case 'denied':
        ledger.append({ type: 'AuthorizationDenied', ...record, code: decision.code });
        return refuse(decision.code, decision.reason);
      case 'rate_limited':
        await defer(g, id, decision.retryAfterMs, decision.reason);
        continue;
      case 'approval_required': {
        ledger.append({
          type: 'ApprovalRequested',
          logicalCallId: id,
          argumentsHash: call.argumentsHash,
          policyVersion: decision.policyVersion,
          reason: decision.reason,
          ...(decision.invalidated ? { invalidated: decision.invalidated } : {}),
        });
        const c = g.clock();
        const outcome = await g.approvals.request(
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
          // Who may approve, and the TTL cap, come from the policy the decision was made under.
          held ? { policy: held.document, action: authz.action } : undefined,
        );
        if (outcome === undefined) {
          return reject(Failure.ApprovalTimedOut, 'no approval decision before the run deadline');
        }
        if (outcome.kind === 'denied') return refuse(Failure.ApprovalDenied, `${outcome.approver}: ${outcome.reason}`);
        approval = outcome.grant;
        continue;
      }
      case 'allowed': {
        const acrossRuns = (decision.rateLimits ?? []).filter((l) => l.per !== 'run');
        if (!quota.held && call.origin === 'model' && acrossRuns.length > 0 && patched(QUOTA_ACROSS_RUNS)) {
          // Limits per principal or tenant hold across runs: the tenant's quota workflow counts every run's calls.
          let across;
          try {
            across = await reserveAcrossRuns({
              tenant: g.tenant,
              principalId: g.principalId,
              runId: g.runId,
              logicalCallId: id,
              action: authz.action,
              limits: acrossRuns,
              clock: g.clock(),
            });
          } catch (err) {
            if (err instanceof QuotaUnavailable) return reject(Failure.QuotaUnavailable, err.message);
            throw err;
          }
          if (!across.ok) {
            await defer(
              g,
              id,
              across.retryAfterMs,
              `${authz.action}: the ${across.scope} rate limit is reached across runs`,
            );
            continue;
          }
          // The slot is held; decide again synchronously (the checks above may have changed during the await).
          quota.held = true;
          continue;
        }
        ledger.append({
          type: 'AuthorizationAllowed',
          ...record,
          expiresAt: decision.expiresAt,
          chain: decision.chain,
        });
        return recordIntent(g, call, decision, { input, held, approval });
      }
    }
  }
}
