/**
 * Step 5 of a call, `recordIntent`: an allowed decision becomes a durable intent before anything is sent. The
 * intent names the call (run, keys, tool and version, arguments hash, principal, tenant, policy version,
 * deadline); it is in the ledger now, and in history as the dispatch activity's input. The budget reservation
 * `decide` took becomes this intent, and the intent counts in its action's rate-limit windows from the time it
 * was first recorded (a decision taken again for the same call records it again, and counts nothing more).
 */
import type { ToolIntent } from '../../src/domain/operation-key';
import {
  dispatchAuthorization,
  type ApprovalGrant,
  type AuthorizationDecision,
  type AuthorizationInput,
  type HeldPolicy,
} from '../../src/domain/authorization';
import type { Allowed, RunModel, ValidatedCall } from '../model';

type AllowedDecision = Extract<AuthorizationDecision, { kind: 'allowed' }>;

export function recordIntent(
  run: RunModel,
  call: ValidatedCall,
  decision: Omit<AllowedDecision, 'capability'>,
  basis: {
    readonly input: AuthorizationInput;
    /** The held policy the decision was made from (the dispatch activity signs it at sending). */
    readonly held: HeldPolicy;
    readonly approval: ApprovalGrant | undefined;
  },
): Allowed {
  const id = call.logicalCallId;
  const intent: ToolIntent = {
    runId: run.runId,
    providerCallId: call.providerCallId,
    logicalCallId: id,
    operationKey: call.operationKey,
    toolName: call.tool.name,
    toolVersion: call.tool.version,
    argumentsHash: call.argumentsHash,
    ...run.who,
    policyVersion: decision.policyVersion,
    deadlineAt: run.deadlineAt,
  };
  run.ledger.append({ type: 'DispatchIntentRecorded', logicalCallId: id, intent });
  run.releaseIntent(id); // the reservation is now the recorded intent
  return {
    ok: true,
    intent,
    intentRecordedAt: run.ledger.projection.calls[id]!.firstIntentAt!,
    authorization: dispatchAuthorization(basis.held, decision),
    ...(basis.approval ? { approval: basis.approval } : {}),
  };
}
