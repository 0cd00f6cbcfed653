/**
 * Steps 3 and 4 of a dispatch attempt: `signAttempt` signs this attempt's capability at the instant of sending (the
 * current policy re-evaluated for exactly this call; a policy change sends nothing), and `sendAndClassify` sends once
 * through the tool's transport and turns its answer into a typed outcome.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { DispatchResponse } from '../../src/domain/activity-contracts';
import { Failure } from '../../src/domain/failures';
import type { SendOutcome } from '../../src/downstream/classify';
import { signAtDispatch, type SignedCapability } from '../authorize.activities';
import type { Attempt } from './attempt';
import type { DispatchContextDeps } from './deps';

/** Only the token's digest, kid and jti are returned (recorded), never the token. */
export function signAttempt(deps: DispatchContextDeps, a: Attempt): SignedCapability | undefined {
  try {
    return signAtDispatch(deps.signer, a.req, Date.now());
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type) throw a.fail(err.type, err.message);
    throw err;
  }
}

function receiptOf(body: unknown): string | undefined {
  if (typeof body === 'object' && body !== null && 'receipt' in body) {
    const r = (body as { receipt: unknown }).receipt;
    return typeof r === 'string' ? r : undefined;
  }
  return undefined;
}

/** One send under the key and fence, and its answer as a typed outcome (a failure for anything but an answer). */
export async function sendAndClassify(a: Attempt, signed: SignedCapability | undefined): Promise<DispatchResponse> {
  const { req } = a;
  const sent = await a.transport.send({
    tool: a.tool,
    intent: req.intent,
    body: req.body,
    key: a.key,
    attempt: a.n,
    fence: a.fence,
    intentAt: req.intentRecordedAt,
    signal: Context.current().cancellationSignal,
    deadlineAtMs: a.deadlineAtMs,
    ...(signed !== undefined ? { capability: signed.token } : {}),
  });
  const sentCapability = signed !== undefined ? { capability: signed.record } : {};
  switch (sent.kind) {
    case 'ok': {
      const recovered = a.n > 1 && sent.replayed ? { recoveredVia: 'same_key_replay' as const } : {};
      const receipt = sent.receipt ?? receiptOf(sent.body);
      const answer = { outcome: 'succeeded' as const, httpStatus: sent.status, body: sent.body, receipt };
      return { ...a.base, ...sentCapability, ...answer, replayed: sent.replayed, ...recovered };
    }
    case 'rejected':
      return rejected(a, sent, sentCapability);
    case 'in_progress':
      throw a.fail(Failure.IdempotencyInProgress, 'an attempt with this key is in progress downstream', true);
    case 'unavailable':
      throw a.fail(Failure.DispatchUnavailable, `downstream unavailable, nothing committed: ${sent.reason}`, true);
    case 'response_lost':
      throw a.fail(Failure.DispatchResponseLost, `request sent, response lost: ${sent.reason}`, true);
  }
}

/** Refusals of the key or the fence: typed failures, no effect from this request. */
const KEY_REFUSALS: readonly string[] = [
  Failure.IdempotencyArgumentsMismatch,
  Failure.IdempotencyKeySealed,
  Failure.FenceStale,
];

/** A refusal: of the capability or the key (typed failures, no effect), or of the business (an answer). */
function rejected(
  a: Attempt,
  sent: Extract<SendOutcome, { kind: 'rejected' }>,
  sentCapability: { capability?: SignedCapability['record'] },
): DispatchResponse {
  if (sent.code === 'Capability.Invalid')
    throw a.fail(Failure.CapabilityRejected, 'downstream refused the capability', false, sentCapability);
  if (KEY_REFUSALS.includes(sent.code)) throw a.fail(sent.code, `downstream refused the key: ${sent.code}`);
  if (sent.code === Failure.IntentExpired || sent.code === Failure.IntentTimeMissing) {
    // This request did nothing; an earlier attempt may have. The workflow reconciles (lookup and seal).
    throw a.fail(sent.code, `downstream refused the intent time ${a.req.intentRecordedAt}: ${sent.code}`);
  }
  const message =
    typeof sent.body === 'object' && sent.body !== null && 'message' in sent.body
      ? String((sent.body as { message: unknown }).message)
      : sent.code;
  return {
    ...a.base,
    ...sentCapability,
    outcome: 'rejected',
    httpStatus: sent.status,
    body: sent.body,
    replayed: false,
    errorCode: sent.reason ?? sent.code,
    errorMessage: message,
  };
}
