/**
 * Step 2 of a dispatch attempt, `checkResend`: an attempt after one that may have sent asks the recovery table
 * (src/domain/recovery.ts) what it may do, and gives it the transport's primitives to ask with (the key's retention,
 * a lookup by key). The table's answer is carried out here and nothing is decided: send, answer with what the lookup
 * found, or send nothing (a typed failure the workflow reconciles).
 */
import { Context } from '@temporalio/activity';
import type { DispatchResponse } from '../../src/domain/activity-contracts';
import { Failure } from '../../src/domain/failures';
import { planResend, type LookupAnswer } from '../../src/domain/recovery';
import { promisesOf } from '../../src/domain/transport';
import type { Attempt } from './attempt';
import type { DispatchContextDeps } from './deps';
import { lookupCall } from './lookup-grant';

/** What the attempt does next: send (the table allows it), or answer with what its lookup found. */
export type ResendOutcome = { readonly send: true } | { readonly answer: DispatchResponse };

export async function checkResend(deps: DispatchContextDeps, a: Attempt): Promise<ResendOutcome> {
  const { req, tool, transport } = a;
  const decision = await planResend(
    {
      contract: req.idempotency,
      promises: promisesOf(tool),
      strategy: a.strategy,
      attempt: a.n,
      dispatch: req.dispatch,
      firstSentAtMs: Date.parse(req.intentRecordedAt),
      nowMs: a.nowMs,
    },
    {
      retention: () => transport.retention(),
      lookup: () =>
        transport.lookup(
          lookupCall(deps.signer, {
            tool,
            service: req.service,
            intent: req.intent,
            key: req.intent.operationKey,
            seal: false,
            body: req.body,
            signal: Context.current().cancellationSignal,
          }),
        ),
    },
  );
  switch (decision.kind) {
    case 'send':
      return { send: true };
    case 'refuse':
      throw a.fail(decision.code, decision.message, decision.retryable);
    case 'answered':
      return { answer: recovered(a, decision.found) };
  }
}

/** What a lookup before a resend found, as this attempt's answer: an earlier attempt's effect or retained refusal. */
function recovered(a: Attempt, found: Extract<LookupAnswer, { kind: 'found' }>): DispatchResponse {
  if (found.status === 'completed') {
    return {
      ...a.base,
      outcome: 'succeeded',
      httpStatus: 200,
      body: found.result,
      ...(found.receipt !== undefined ? { receipt: found.receipt } : {}),
      replayed: true,
      recoveredVia: 'receipt_lookup',
    };
  }
  return {
    ...a.base,
    outcome: 'rejected',
    httpStatus: 422,
    body: found.errorCode !== undefined ? { error: found.errorCode, message: found.errorMessage } : undefined,
    replayed: true,
    recoveredVia: 'receipt_lookup',
    errorCode: found.errorCode ?? Failure.DispatchRejected,
    errorMessage: found.errorMessage ?? 'rejected by the downstream',
  };
}
