/**
 * A dispatch request for `wallet_debit` whose parts agree: the body is the tool's canonical form, the arguments
 * hash is that body's hash and the operation key derives from it, as the workflow makes them. The signer at
 * dispatch re-derives all of this from the body and refuses a request that does not agree (nothing is sent).
 */
import { hashCanonical } from '../../src/domain/canonical';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import { deriveOperationKey, type ToolIntent } from '../../src/domain/identity';

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
      occurrence: 0,
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

export function walletDebitRequest(minor = 100, over: Partial<DispatchRequest> = {}): DispatchRequest {
  const { intent, body } = walletDebitIntent(minor);
  return {
    intent,
    service: 'wallet',
    route: '/v1/debits',
    body,
    strategy: 'same_key_replay',
    dispatch: 1,
    keyUsed: intent.operationKey,
    intentRecordedAt: new Date().toISOString(),
    ...over,
  };
}
