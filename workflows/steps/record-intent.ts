/**
 * Step 5 of a call, `recordIntent`: an allowed decision becomes a durable intent before anything is sent. The
 * intent names the call (run, keys, tool and version, arguments hash, principal, tenant, policy version,
 * deadline); it is in the ledger now, and in history as the dispatch activity's input. The budget reservation
 * `decide` took becomes this intent, and the dispatch counts toward the action's rate limit.
 */
import type { ToolIntent } from '../../src/domain/identity';
import {
  capabilityClaims,
  type ApprovalGrant,
  type AuthorizationDecision,
  type AuthorizationInput,
  type DispatchAuthorization,
  type HeldPolicy,
} from '../../src/policy/authorization';
import type { DispatchGate, GateResult } from './decide';
import type { ValidatedCall } from './validate';

type Allowed = Extract<AuthorizationDecision, { kind: 'allowed' }>;

export function recordIntent(
  g: DispatchGate,
  call: ValidatedCall,
  decision: Allowed,
  basis: {
    readonly input: AuthorizationInput;
    /** The held policy the decision was made from (the dispatch activity signs it at sending). */
    readonly held: HeldPolicy | undefined;
    readonly approval: ApprovalGrant | undefined;
  },
): GateResult {
  const id = call.logicalCallId;
  const intent: ToolIntent = {
    runId: g.runId,
    providerCallId: call.providerCallId,
    logicalCallId: id,
    operationKey: call.operationKey,
    toolName: call.tool.name,
    toolVersion: call.tool.version,
    argumentsHash: call.argumentsHash,
    principalId: g.principalId,
    tenant: g.tenant,
    policyVersion: decision.policyVersion,
    deadlineAt: g.deadlineAt,
  };
  const recorded = g.ledger.append({ type: 'DispatchIntentRecorded', logicalCallId: id, intent });
  g.releaseBudget(id); // the reservation is now the recorded intent
  const action = basis.input.request.action;
  g.dispatchTimes.set(action, [...(g.dispatchTimes.get(action) ?? []), Date.now()]);
  const signLater: DispatchAuthorization | undefined = basis.held
    ? {
        claims: capabilityClaims(basis.input, decision),
        policyDigest: basis.held.digest,
        chain: decision.chain,
        reason: decision.reason,
        issuedAt: decision.issuedAt,
      }
    : undefined;
  return {
    ok: true,
    intent,
    intentRecordedAt: recorded.at,
    capability: decision.capability,
    authorization: signLater,
    approval: basis.approval,
  };
}
