/**
 * A dispatch request for `wallet_debit` whose parts agree: the body is the tool's canonical form, the arguments
 * hash is that body's hash and the operation key derives from it, as the workflow makes them. The signer at
 * dispatch re-derives all of this from the body and refuses a request that does not agree (nothing is sent).
 */
import { hashCanonical } from '../../src/domain/canonical';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import { deriveOperationKey, type ToolIntent } from '../../src/domain/operation-key';
import {
  dispatchAuthorization,
  type AuthorizationInput,
  type DispatchAuthorization,
} from '../../src/domain/authorization';
import { evaluate } from '../../src/policy/evaluate';
import { DEFAULT_POLICY, type Policy } from '../../src/domain/policy-format';
import { policyDigest } from '../../src/stores/policy-store';

export function walletDebitIntent(
  minor = 100,
  over: Partial<ToolIntent> = {},
): { intent: ToolIntent; body: { tenant: string; account: string; amount: { minor: number; currency: string } } } {
  const body = { tenant: 'acme', account: 'acct_1', amount: { minor, currency: 'EUR' } };
  const argumentsHash = hashCanonical(body);
  const runId = over.runId ?? 'run-1';
  const intent: ToolIntent = {
    runId,
    providerCallId: 'call_1',
    logicalCallId: 'lc_1_abc',
    operationKey: deriveOperationKey({
      tenant: 'acme',
      runId,
      toolName: 'wallet_debit',
      toolVersion: 1,
      argumentsHash,
    }),
    toolName: 'wallet_debit',
    toolVersion: 1,
    argumentsHash,
    principalId: 'user:alice',
    tenant: 'acme',
    policyVersion: 'ledgerloop-default/1',
    deadlineAt: new Date(Date.now() + 60_000).toISOString(),
    ...over,
  };
  return { intent, body };
}

/**
 * The decision a workflow holding `policy` makes for a wallet debit of `intent` and `body`, as the dispatch activity
 * is handed it: evaluated honestly (an amount over the approval threshold is refused here, not forged).
 */
export function walletDebitAuthorization(
  intent: ToolIntent,
  body: { readonly amount: { readonly minor: number; readonly currency: string } },
  policy: Policy = DEFAULT_POLICY,
  keyMode: 'exact' | 'derived' = 'exact',
): DispatchAuthorization {
  const input: AuthorizationInput = {
    principalId: intent.principalId,
    tenant: intent.tenant,
    logicalCallId: intent.logicalCallId,
    operationKey: intent.operationKey,
    argumentsHash: intent.argumentsHash,
    toolName: 'wallet_debit',
    scope: 'wallet.charge',
    request: {
      action: 'wallet.debit',
      resource: `${intent.tenant}/account/acct_1`,
      resourceTenant: intent.tenant,
      amountMinor: body.amount.minor,
      currency: body.amount.currency,
    },
    origin: 'model',
    toolApprovalReason: null,
    recentDispatches: [],
    keyMode,
    nowMs: Date.now(),
  };
  const decision = evaluate(policy, input);
  if (decision.kind !== 'allowed') throw new Error(`the policy does not allow this debit: ${decision.reason}`);
  return dispatchAuthorization({ document: policy, digest: policyDigest(policy) }, decision);
}

export function walletDebitRequest(minor = 100, over: Partial<DispatchRequest> = {}): DispatchRequest {
  const { intent, body } = walletDebitIntent(minor);
  const strategy = over.strategy ?? 'same_key_replay';
  return {
    intent,
    service: 'wallet',
    route: '/v1/debits',
    body,
    strategy,
    dispatch: 1,
    keyUsed: intent.operationKey,
    intentRecordedAt: new Date().toISOString(),
    idempotency: 'idempotent_by_key',
    authorization: walletDebitAuthorization(
      intent,
      body,
      DEFAULT_POLICY,
      strategy === 'blind_retry' ? 'derived' : 'exact',
    ),
    ...over,
  };
}
