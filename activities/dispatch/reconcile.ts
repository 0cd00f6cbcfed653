/**
 * `reconcileCall`: ask a call's downstream by key (sealing a missing key when asked and able), and report what it
 * holds. What the answer settles is the recovery table's to say, in the workflow (`afterLookup`).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ReconcileRequest, ReconcileResponse } from '../../src/domain/activity-contracts';
import { Failure } from '../../src/domain/failures';
import { toolOrFail, transportOrFail, type DispatchContextDeps } from './deps';
import { lookupCall } from './lookup-grant';

export async function reconcileCall(deps: DispatchContextDeps, req: ReconcileRequest): Promise<ReconcileResponse> {
  const tool = toolOrFail(deps, req.intent.toolName);
  const transport = transportOrFail(deps, tool, req.service);
  const key = req.intent.operationKey;
  const found = await transport.lookup(
    lookupCall(deps.signer, {
      tool,
      service: req.service,
      intent: req.intent,
      key,
      seal: req.seal,
      ...(req.body !== undefined ? { body: req.body } : {}),
      signal: Context.current().cancellationSignal,
    }),
  );
  if (found.kind === 'unreachable') throw ApplicationFailure.retryable(found.reason, Failure.ReconcileUnreachable);
  // The downstream refused the lookup itself (no or a wrong capability): retrying the same request cannot help.
  if (found.kind === 'refused')
    throw ApplicationFailure.nonRetryable(`lookup refused: ${found.code}: ${found.reason}`, Failure.CapabilityRejected);
  if (found.kind === 'not_found') {
    // A seal the downstream did not confirm proves nothing: asked to, try the seal again (Temporal retries).
    if (req.seal && !found.sealed && req.retrySeal === true)
      throw ApplicationFailure.retryable(
        `${req.service} found no effect under the key but did not seal it`,
        Failure.SealRefused,
      );
    return { kind: 'not_found', sealed: found.sealed };
  }
  if (found.status === 'in_progress')
    throw ApplicationFailure.retryable('effect still in progress downstream', Failure.IdempotencyInProgress);
  return {
    kind: 'found',
    status: found.status,
    ...(found.receipt !== undefined ? { receipt: found.receipt } : {}),
    ...(found.result !== undefined ? { result: found.result } : {}),
    ...(found.errorCode !== undefined ? { errorCode: found.errorCode } : {}),
  };
}
