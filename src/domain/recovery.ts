/**
 * THE recovery table: what Ledgerloop does after a response that may have been lost, decided here and nowhere
 * else, by the tool's declared idempotency contract and what its downstream promises (src/domain/transport.ts).
 * The workflow reads it (sandbox-safe: no I/O, no Node built-ins), the dispatch activity reads it, and no transport
 * carries a copy: a transport only sends, looks up and says what it promises.
 *
 * | contract                 | an attempt after one that may have sent                                      |
 * |--------------------------|------------------------------------------------------------------------------|
 * | `idempotent_by_key`      | resend under the same key while the key is inside its retention (counted     |
 * |                          | from the first send as recorded in history, with a safety margin); the run's |
 * |                          | strategy may look it up first; past the retention: no resend, look it up     |
 * | `reconcilable_by_lookup` | look it up first: found is the answer; not found is a resend only where the  |
 * |                          | downstream also dedupes the key inside its retention, else no resend          |
 * | `none`                   | never resent once an attempt may have reached the downstream                  |
 *
 * | a lookup's answer (after no answer)  | what settles the call                                              |
 * |--------------------------------------|--------------------------------------------------------------------|
 * | the effect, or a retained refusal     | SUCCEEDED with the effect, or FAILED with the refusal            |
 * | not found, sealed                      | FAILED: the key can never commit now                             |
 * | not found, unsealed, inside the window | nothing: the call stays UNKNOWN and is looked up again after the |
 * |                                        | declared maximum in-flight time (plus lookup lag) since the last |
 * |                                        | send; a request still in flight could land until then            |
 * | not found, unsealed, after the window  | FAILED: absence is proven                                        |
 * | not found, unsealed, no window declared| UNKNOWN for an operator                                          |
 * | no lookup, or the lookup fails         | UNKNOWN for an operator (the run's stop compensates it first     |
 * |                                        | when the tool declares a compensation and `onAbort` is the default)|
 *
 * The per-transport rows, each naming the test that backs it, are in docs/downstreams.md;
 * test/unit/downstreams-doc.test.ts checks that every named test exists under that title.
 */
import type { ReconcileResponse } from './activity-contracts';
import { Failure, type FailureType } from './failures';
import { STRATEGIES, strategyOf, type RetryStrategy, type StrategyDeclaration } from './retry-strategies';
import type { IdempotencyContract } from './tool';
import type { Promises } from './transport';

/** A same-key resend is only sent while the key is this well inside its retention (clocks and queues drift). */
export const RETENTION_SAFETY = 0.8;

/** What a lookup answers, whatever the transport: the table's one vocabulary for evidence. */
export type LookupAnswer =
  | {
      readonly kind: 'found';
      /** `completed` holds the effect; `failed` a refusal the downstream retained (no effect); `in_progress`: wait. */
      readonly status: 'completed' | 'failed' | 'in_progress';
      readonly receipt?: string;
      readonly result?: unknown;
      readonly errorCode?: string;
      readonly errorMessage?: string;
    }
  | { readonly kind: 'not_found'; readonly sealed: boolean }
  /** The downstream refused the lookup itself (a capability, a bad request): asking again will not help. */
  | { readonly kind: 'refused'; readonly code: string; readonly reason: string }
  | { readonly kind: 'unreachable'; readonly reason: string };

// ---------------------------------------------------------------------------------------------------------------
// The run's strategy, narrowed by the contract (what the workflow sends with each dispatch).

/** A call's retry behaviour: the strategy the tool's contract leaves, and whether it may be dispatched again. */
export interface CallRetry extends StrategyDeclaration {
  readonly strategy: RetryStrategy;
  /** Whether the call runner may dispatch the call again (a new decision) once an attempt may have sent. */
  readonly mayRedispatch: boolean;
}

/**
 * The strategy a call's dispatches use. A strategy the contract does not narrow (only one the repository's lab
 * installs) is taken as it is; one this bundle does not serve is read as the strictest: look up, never resend.
 */
export function retryFor(runStrategy: RetryStrategy, contract: IdempotencyContract): CallRetry {
  const declared = strategyOf(runStrategy);
  const narrowed = ((): { strategy: RetryStrategy; mayRedispatch: boolean } => {
    if (declared === undefined) return { strategy: 'check_receipt', mayRedispatch: false };
    if (!declared.narrowedByContract) return { strategy: runStrategy, mayRedispatch: true };
    if (contract === 'idempotent_by_key') return { strategy: runStrategy, mayRedispatch: true };
    return { strategy: 'check_receipt', mayRedispatch: contract === 'reconcilable_by_lookup' };
  })();
  return { ...(strategyOf(narrowed.strategy) ?? STRATEGIES.check_receipt), ...narrowed };
}

// ---------------------------------------------------------------------------------------------------------------
// The dispatch activity: an attempt after one that may have sent.

/** What an attempt asks its downstream while the table decides: its key's retention, and a lookup by key. */
export interface ResendQuestions {
  /** The retention in force (the declared one, or what the service declares); undefined when it cannot be read. */
  retention(): Promise<{ readonly ms: number } | { readonly unreadable: string }>;
  /** A lookup by the key (never a seal). */
  lookup(): Promise<LookupAnswer>;
}

export interface ResendInput {
  readonly contract: IdempotencyContract;
  readonly promises: Promises;
  readonly strategy: Pick<StrategyDeclaration, 'narrowedByContract' | 'lookUpBeforeResend'>;
  /** Temporal's attempt number of this dispatch activity (1 for the first). */
  readonly attempt: number;
  /** The workflow dispatch of the call (1 for the first). */
  readonly dispatch: number;
  /** The first send as recorded in history (workflow time of the call's first intent, which the send follows). */
  readonly firstSentAtMs: number;
  readonly nowMs: number;
}

/** What the attempt does: send, answer with what the lookup found, or send nothing (a typed refusal). */
export type ResendDecision =
  | { readonly kind: 'send'; readonly resend: boolean }
  | { readonly kind: 'answered'; readonly found: Extract<LookupAnswer, { kind: 'found' }> }
  | { readonly kind: 'refuse'; readonly code: FailureType; readonly message: string; readonly retryable: boolean };

const refuse = (code: FailureType, message: string, retryable = false): ResendDecision => ({
  kind: 'refuse',
  code,
  message,
  retryable,
});

/**
 * Whether an earlier attempt may have sent. A workflow dispatch after the first counts as a resend, except for a
 * `none` tool: the call runner dispatches one again only when the earlier dispatch proved it sent nothing
 * (`retryFor(...).mayRedispatch` is false for `none`), so only a Temporal retry can follow a possible send.
 */
function earlierMaySend(input: ResendInput): boolean {
  if (input.contract === 'none') return input.attempt > 1;
  return input.attempt > 1 || input.dispatch > 1;
}

/** The rows of the first table above, for one attempt. */
export async function planResend(input: ResendInput, ask: ResendQuestions): Promise<ResendDecision> {
  if (!earlierMaySend(input)) return { kind: 'send', resend: false };
  // The lab's naive loop is not narrowed: it resends blindly, which is the bug it exists to show.
  if (!input.strategy.narrowedByContract) return { kind: 'send', resend: true };
  const { contract, promises } = input;
  if (contract === 'none')
    return refuse(Failure.DispatchNoResend, `attempt ${input.attempt} of a tool without idempotency does not resend`);
  const lookUpFirst =
    contract === 'reconcilable_by_lookup' || (input.strategy.lookUpBeforeResend && promises.lookup !== undefined);
  if (lookUpFirst) {
    const seen = await lookUpBeforeSending(promises, ask);
    if (seen !== undefined) return seen;
  }
  return sameKeyResend(input, ask);
}

/** A lookup before a resend: what it found answers; a missing key goes on to the resend rule, or refuses. */
async function lookUpBeforeSending(promises: Promises, ask: ResendQuestions): Promise<ResendDecision | undefined> {
  if (promises.lookup === undefined)
    return refuse(Failure.AbsenceUnproven, 'the downstream cannot be asked by key, so no resend is risked');
  const found = await ask.lookup();
  switch (found.kind) {
    case 'unreachable':
      return refuse(Failure.DispatchUnavailable, found.reason, true);
    case 'refused':
      return refuse(Failure.CapabilityRejected, `lookup refused: ${found.code}: ${found.reason}`);
    case 'found':
      if (found.status === 'in_progress')
        return refuse(Failure.IdempotencyInProgress, 'an earlier attempt is still in progress', true);
      return { kind: 'answered', found };
    case 'not_found':
      // A sealed key: the send below is refused by the downstream, typed. An unsealed one proves nothing, unless
      // the downstream also dedupes the key (then a resend inside its retention is answered from its record).
      if (found.sealed || promises.keyRetentionMs !== undefined) return undefined;
      return refuse(
        Failure.AbsenceUnproven,
        'not found, but the downstream neither seals nor dedupes the key: a request still in flight could land, so nothing is resent',
      );
  }
}

/** A same-key resend: only inside the key's retention, counted from the first send as recorded in history. */
async function sameKeyResend(input: ResendInput, ask: ResendQuestions): Promise<ResendDecision> {
  if (input.promises.keyRetentionMs === undefined)
    return refuse(Failure.ContractUnreadable, 'the downstream declares no key retention, so no same-key resend');
  const retention = await ask.retention();
  if ('unreadable' in retention)
    return refuse(
      Failure.ContractUnreadable,
      `the key retention could not be read, so a same-key resend is not risked: ${retention.unreadable.slice(0, 200)}; reconcile instead`,
    );
  const age = input.nowMs - input.firstSentAtMs;
  if (age > retention.ms * RETENTION_SAFETY)
    return refuse(
      Failure.RetentionExpired,
      `the key was first sent ${age} ms ago and is retained for ${retention.ms} ms: look it up instead of resending`,
    );
  return { kind: 'send', resend: true };
}

// ---------------------------------------------------------------------------------------------------------------
// The workflow: reconciling a call whose dispatch brought no answer.

/** How a call with no answer is reconciled: looked up (sealing a missing key where the downstream seals), or not. */
export function reconcileRule(promises: Promises): { readonly lookUp: boolean; readonly seal: boolean } {
  return { lookUp: promises.lookup !== undefined, seal: promises.seals === true };
}

/** When an unsealed `not_found` proves absence: the declared in-flight time plus the lookup's lag, after a send. */
export function absenceProvenAt(promises: Promises, lastSendBoundMs: number): number | undefined {
  if (promises.maxInFlightMs === undefined) return undefined;
  return lastSendBoundMs + promises.maxInFlightMs + (promises.lookupLagMs ?? 0);
}

/** What a lookup's answer settles, by the second table above. */
export type LookupVerdict =
  | { readonly kind: 'succeeded' }
  | { readonly kind: 'failed'; readonly proof: 'retained_refusal' | 'sealed' | 'absent_after_window' }
  /** Not proven either way yet: look up again at `untilMs` (workflow time). */
  | { readonly kind: 'wait'; readonly untilMs: number }
  | { readonly kind: 'operator'; readonly why: string };

export interface LookupContext {
  readonly service: string;
  readonly promises: Promises;
  /** The latest time any attempt of the call could have sent (workflow time): the window counts from it. */
  readonly lastSendBoundMs: number;
  readonly nowMs: number;
}

export function afterLookup(answer: ReconcileResponse, c: LookupContext): LookupVerdict {
  if (answer.kind === 'found') {
    return answer.status === 'completed' ? { kind: 'succeeded' } : { kind: 'failed', proof: 'retained_refusal' };
  }
  if (answer.sealed) return { kind: 'failed', proof: 'sealed' };
  const provenAt = absenceProvenAt(c.promises, c.lastSendBoundMs);
  if (provenAt === undefined)
    return { kind: 'operator', why: `${c.service} would not seal the key and declares no maximum in-flight time` };
  if (c.nowMs >= provenAt) return { kind: 'failed', proof: 'absent_after_window' };
  return { kind: 'wait', untilMs: provenAt };
}
