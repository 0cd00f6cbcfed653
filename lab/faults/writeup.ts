/**
 * The lab write-up of one case: a few generated sentences on why the invariant held or broke, which durable
 * record made recovery possible, and who must repair an outcome that stayed UNKNOWN. Everything it says comes
 * from the evidence (the rebuilt ledger, the metrics from the history and the downstream databases) and from the
 * timeline of what the runner did.
 */
import { ASSUMED_FAILED } from '../strategies';
import type { LedgerEvent, LeftStanding } from '../../src/domain/ledger-events';
import type { AssertionFailure } from './assertions';
import type { CallRow, Evidence } from './evidence';
import type { PlannedCase } from './plan';
import type { ProbeResult } from './probe';
import type { Timeline } from './timeline';

export interface WriteUpInput {
  readonly pc: PlannedCase;
  readonly evidence: Evidence;
  readonly timeline: Timeline;
  readonly failures: readonly AssertionFailure[];
  readonly probe?: ProbeResult;
}

const short = (key: string | null | undefined): string => (key ? `${key.slice(0, 14)}…` : '(no key)');

function events(e: Evidence): readonly LedgerEvent[] {
  return e.rebuilt?.events ?? [];
}

function crashSentence(input: WriteUpInput): string | undefined {
  const t = input.timeline;
  const kill = t.events.find((e) => e.kind === 'worker_killed' || (e.kind === 'crash_point' && e.action === 'kill'));
  const pause = t.events.find((e) => (e.kind === 'crash_point' && e.action === 'pause') || e.kind === 'worker_paused');
  const restart = t.events.find((e) => e.kind === 'server_restarted');
  const published = t.events.find((e) => e.kind === 'policy_published');
  if (published)
    return `${published.text.replace(/^published policy (\S+)/, 'Policy $1 was published')}; the approval named the old version, and the decision at dispatch was made under the new one.`;
  if (kill?.point === 'workflow.before_intent') {
    return `Worker ${kill.pid} was SIGKILLed inside the workflow task that records the intent; that task never reached the server, so neither the intent nor a dispatch existed, and a fresh worker redid it from the last durable event.`;
  }
  if (restart)
    return `The Temporal server was SIGKILLed mid-run and came back on the same SQLite database (${restart.text.split(' after ')[1] ?? 'restarted'}).`;
  if (pause?.kind === 'worker_paused')
    return `Worker ${pause.pid} was SIGSTOPped while its request was held on the wire; a fresh worker took over the retry, then the held request was delivered late and the worker resumed.`;
  if (pause)
    return `Worker ${pause.pid} stopped itself at ${pause.point}; a fresh worker took over the retry before it was resumed.`;
  if (kill)
    return `Worker ${kill.pid} was SIGKILLed at ${kill.point ?? 'the held request'}; a fresh worker process took over.`;
  return undefined;
}

function effectSentence(input: WriteUpInput, first: CallRow | undefined): string {
  const m = input.evidence.metrics;
  const effects = Number(m.business_effect_count);
  const logical = Number(m.logical_call_count);
  const attempts = Number(m.attempt_count);
  const log = input.evidence.requestLog;
  if (Number(m.dispatch_count) === 0) {
    const code = String(m.error_code) || 'a typed rejection';
    const where = code.startsWith('Proposal.')
      ? 'validation (ProposalRejected)'
      : code.startsWith('Approval.')
        ? 'the approval step (ApprovalRequested, then no usable approval)'
        : 'authorization at dispatch (AuthorizationDenied, under the current policy)';
    const intent = events(input.evidence).some((e) => e.type === 'DispatchIntentRecorded');
    const before = intent
      ? 'after its intent was recorded but before any request left a worker (the capability bound to the decision had lapsed, so the call was decided again)'
      : 'before any DispatchIntentRecorded';
    return `Nothing reached a downstream (dispatch_count 0): the workflow stopped the proposal at ${where} with ${code}, ${before}.`;
  }
  if (input.probe && input.probe.outcome !== 'ok' && input.probe.outcome !== 'replayed') {
    return `The probe ${input.probe.text.replace(/^resent/, 'resent')}; the wallet's own idempotency record refused it, so the key still names one intent (business_effect_count ${effects}).`;
  }
  if (logical > 0 && effects > logical) {
    return `Broke on purpose: ${effects} effects for ${logical} logical call(s) across ${attempts} attempts, because ${input.pc.strategy === 'blind_retry' ? 'every retry went out under a fresh key, so the downstream could not tell a retry from a new intent' : 'a retry was accepted as a new intent'}.`;
  }
  const done = events(input.evidence).flatMap((e) => (e.type === 'CompensationCompleted' ? [e] : []));
  if (done.length > 0) {
    const offset = done.filter((e) => e.outcome === 'OFFSET').length;
    const comps = input.evidence.calls
      .filter((c) => c.origin === 'compensation')
      .map((c) => `${c.toolName} ${c.state}`);
    return `A step failed after others had taken effect; the saga offset ${offset} of ${done.length} with new governed effects (${comps.join(', ')}), each under its own key and authorized at dispatch as origin compensation; the downstreams counted ${effects} effects in all (forward and offsetting), never a rollback.`;
  }
  const stale = log.refusedBy['Fence.Stale'] ?? 0;
  if (stale > 0) {
    return `The stale worker's request reached the downstream with a lower fence than the retry's and was refused (Fence.Stale x${stale}); effects stayed at ${effects} for ${logical} call(s), stale_dispatch_count ${m.stale_dispatch_count}.`;
  }
  const via = first?.reconciledVia;
  const perIntent =
    effects === logical
      ? `One effect per intent (${effects} for ${logical})`
      : `${effects} effect(s) for ${logical} logical call(s)`;
  if (via === 'receipt_lookup') {
    return `${perIntent} across ${attempts} attempts: before sending again the retry asked the downstream for key ${short(first?.operationKey)} and found its receipt (ToolEffectReconciled via receipt_lookup).`;
  }
  if (via === 'same_key_replay') {
    return `${perIntent} across ${attempts} attempts: the retry reused key ${short(first?.operationKey)} and the downstream answered from its idempotency record without a new effect.`;
  }
  return `The downstream committed ${effects} effect(s) for ${logical} logical call(s) in ${attempts} attempt(s).`;
}

function recordSentence(input: WriteUpInput, first: CallRow | undefined): string {
  const m = input.evidence.metrics;
  const evs = events(input.evidence);
  const intent = evs.find((e) => e.type === 'DispatchIntentRecorded');
  const hash = m.projection_hash_stable
    ? `, and a new worker rebuilt the same projection hash (${String(m.projection_hash_after).slice(0, 12)}…) from the fetched history`
    : `; the projection hash was NOT rebuilt identically (${String(m.projection_hash_before).slice(0, 12)}… vs ${String(m.projection_hash_after).slice(0, 12)}…)`;
  if (intent && intent.type === 'DispatchIntentRecorded') {
    const i = intent.intent;
    const downstream =
      Number(m.dispatch_count) > 0 ? ` plus the downstream's idempotency record under ${short(i.operationKey)}` : '';
    return `Durable records: DispatchIntentRecorded (#${intent.seq}: key ${short(i.operationKey)}, arguments ${i.argumentsHash.slice(0, 10)}…, policy ${i.policyVersion}) in the Temporal history${downstream}${hash}.`;
  }
  const rejection = evs.find(
    (e) => e.type === 'ProposalRejected' || e.type === 'AuthorizationDenied' || e.type === 'ApprovalDenied',
  );
  const what = rejection
    ? `${rejection.type} (#${rejection.seq}) in the run's ledger, kept in the Temporal history`
    : 'the run\u2019s ledger in the Temporal history';
  return `Durable record: ${what}${first ? ` for ${first.logicalCallId}` : ''}${hash}.`;
}

/** The stop event's structured `leftStanding` (the write-up never reads a call id out of the stop's prose). */
export function leftStandingOf(evs: readonly LedgerEvent[]): readonly LeftStanding[] | undefined {
  for (let i = evs.length - 1; i >= 0; i--) {
    const e = evs[i]!;
    if (e.type === 'RunCompleted') return e.leftStanding ?? [];
  }
  return undefined;
}

/** What the stop left standing for an operator, from `RunCompleted.leftStanding`; undefined when it left nothing. */
export function leftStandingSentence(evs: readonly LedgerEvent[]): string | undefined {
  const stop = [...evs].reverse().find((e) => e.type === 'RunCompleted');
  const left = leftStandingOf(evs) ?? [];
  if (!stop || stop.type !== 'RunCompleted' || left.length === 0) return undefined;
  const items = left.map(
    (l) => `${l.logicalCallId} (${l.toolName}, key ${short(l.operationKey || null)}, ${l.state}, ${l.why})`,
  );
  const unknown = left.filter((l) => l.state === 'UNKNOWN').length;
  return `The run stopped ${stop.stopReason} and left ${left.length} effect(s) standing for an operator (RunCompleted.leftStanding): ${items.join('; ')}${unknown > 0 ? `; ${unknown} of them UNKNOWN: an operator must check the downstream under its key and settle it with the resolveCall update` : ''}.`;
}

function unknownSentence(input: WriteUpInput): string {
  const calls = input.evidence.calls;
  const left = leftStandingSentence(events(input.evidence));
  if (left) return left;
  const open = calls.filter((c) => c.state === 'UNKNOWN');
  if (open.length > 0) {
    const c = open[0]!;
    return `${c.logicalCallId} stayed UNKNOWN: no durable record settled it, so an operator must check the ${c.toolName.split('_')[0]} service under key ${short(c.operationKey)} and settle it with the resolveCall update (who and why go into the ledger).`;
  }
  if (input.pc.strategy === 'blind_retry' && calls.some((c) => c.errorCode === ASSUMED_FAILED)) {
    return 'blind_retry called the lost outcome FAILED instead of UNKNOWN; the extra charge is real and must be repaired by a refund (a compensation) or an operator, not by another retry.';
  }
  const unsettled = events(input.evidence).find(
    (e) => e.type === 'CompensationCompleted' && e.outcome !== 'OFFSET' && e.outcome !== 'NOTHING_TO_OFFSET',
  );
  if (unsettled && unsettled.type === 'CompensationCompleted') {
    return `The compensation of ${unsettled.forwardCallId} ended ${unsettled.outcome}: the forward effect stays visible and an operator must repair it (the run stops with compensation_failed); no retry or rollback can do it.`;
  }
  if (
    input.pc.strategy === 'blind_retry' &&
    Number(input.evidence.metrics.business_effect_count) > Number(input.evidence.metrics.logical_call_count)
  ) {
    const extra =
      Number(input.evidence.metrics.business_effect_count) - Number(input.evidence.metrics.logical_call_count);
    return `The extra ${extra === 1 ? 'charge is a real effect' : `${extra} charges are real effects`} that no retry can take back: a refund (a compensation with its own key and authorization) or an operator must repair it.`;
  }
  const marked = events(input.evidence).find((e) => e.type === 'ToolOutcomeMarkedUnknown');
  if (marked) {
    const c = calls.find((x) => x.logicalCallId === marked.logicalCallId);
    const via = c?.reconciledVia ?? 'a retry under the same key';
    return `${marked.logicalCallId} was UNKNOWN after the lost response, not FAILED; the workflow settled it itself (${via}), so no operator was needed.`;
  }
  const stopped = leftStandingOf(events(input.evidence));
  if (stopped === undefined)
    return 'The run recorded no stop (no RunCompleted), so nothing says what it left standing; had reconciliation failed, the call would wait for an operator (resolveCall update) instead of being marked FAILED.';
  return 'No call was left UNKNOWN and the stop left nothing standing (RunCompleted.leftStanding is empty); had reconciliation failed, the call would wait for an operator (resolveCall update) instead of being marked FAILED.';
}

/** The write-up sentences of one case. */
export function labWriteUp(input: WriteUpInput): string[] {
  const first = input.evidence.calls[0];
  const verdict =
    input.failures.length === 0
      ? `All ${input.pc.expect.length} assertions held.`
      : `${input.failures.length} of ${input.pc.expect.length} assertions failed: ${input.failures.map((f) => `${f.metric} ${f.op} ${JSON.stringify(f.expected)} (observed ${JSON.stringify(f.observed)})`).join('; ')}.`;
  const crash = crashSentence(input);
  return [
    verdict,
    ...(crash ? [crash] : []),
    effectSentence(input, first),
    recordSentence(input, first),
    unknownSentence(input),
  ];
}
