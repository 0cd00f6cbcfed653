/**
 * The promise, checked on whatever a real model proposed. Pure: it reads the runs' ledgers, their results and
 * the downstreams' own effect logs (`idem_effects` of each service's database), and returns every violation:
 *
 *   one_effect_per_intent       no operation key a run recorded an intent for (DispatchIntentRecorded) has more
 *                               than one effect in a downstream's database, and no effect there lacks an intent;
 *   every_proposal_validated    every ToolProposalRecorded is followed by ArgumentsCanonicalized or
 *                               ProposalRejected for that call, and nothing is dispatched that was not canonicalized;
 *   typed_stop_before_deadline  every run returned a result with a typed stop reason, and its ledger's
 *                               RunCompleted says the same and was recorded before the deadline (a stop may use the
 *                               run's abort grace after it to compensate: deadline + abortGraceMs is the bound).
 *
 * It does not judge whether the model was smart: a run that proposed nonsense and stopped `tool_failed` passes.
 */
import type { CallOrigin, LedgerEvent } from '../../src/domain/ledger-events';
import { DEFAULT_CAPS, type AgentRunResult, type StopReason } from '../../src/domain/run';
import type { EffectRow } from '../faults/explore-invariants';

/** Every typed stop reason: a record over `StopReason`, so a reason added to the type must be added here. */
const TYPED_STOPS: Readonly<Record<StopReason, true>> = {
  completed: true,
  budget_exhausted: true,
  deadline_exceeded: true,
  tool_failed: true,
  authorization_denied: true,
  outcome_unknown: true,
  operator_stopped: true,
  model_failed: true,
  compensation_failed: true,
};
export const STOP_REASONS = Object.keys(TYPED_STOPS) as readonly StopReason[];

export type CheckId = 'one_effect_per_intent' | 'every_proposal_validated' | 'typed_stop_before_deadline';

export interface Violation {
  readonly check: CheckId;
  /** The run it concerns ('' for an effect no run explains). */
  readonly run: string;
  readonly message: string;
}

/** What the checker reads about one run. */
export interface ModelRunRecord {
  /** A label for the report, e.g. `wallet #1`. */
  readonly name: string;
  readonly workflowId: string;
  readonly deadlineAt: string;
  /** The run's abort grace (its `caps.abortGraceMs`, default DEFAULT_CAPS.abortGraceMs). */
  readonly abortGraceMs?: number;
  /** The run's result; undefined when the workflow failed or never returned (then `error` says why). */
  readonly result?: AgentRunResult;
  readonly error?: string;
  readonly events: readonly LedgerEvent[];
}

/** One proposal and what the pipeline made of it. */
export interface ProposalOutcome {
  readonly logicalCallId: string;
  readonly turn: number;
  readonly toolName: string;
  /** `model` for the model's proposals; `compensation` for the workflow's own offsetting calls. */
  readonly origin: CallOrigin;
  /** `valid` (canonicalized), `rejected` (with the code), or `unvalidated` (a violation). */
  readonly verdict: 'valid' | 'rejected' | 'unvalidated';
  readonly code?: string;
  readonly message?: string;
  readonly operationKey?: string;
}

export interface RunSummary {
  readonly name: string;
  readonly workflowId: string;
  readonly stopReason: string;
  readonly detail: string;
  /** Milliseconds from RunCompleted to the deadline (negative: after it). */
  readonly marginMs?: number;
  readonly turns: number;
  readonly proposals: readonly ProposalOutcome[];
  readonly intents: number;
  readonly effects: number;
  readonly violations: readonly Violation[];
}

export interface CheckReport {
  readonly runs: readonly RunSummary[];
  /** Every violation, including effects no run explains. */
  readonly violations: readonly Violation[];
}

/** Each proposal of a run with the event that validated or rejected it. */
export function proposalOutcomes(events: readonly LedgerEvent[]): ProposalOutcome[] {
  const out: ProposalOutcome[] = [];
  events.forEach((e, i) => {
    if (e.type !== 'ToolProposalRecorded') return;
    const later = events.slice(i + 1);
    // A call may be canonicalized and then refused by a check that needs its canonical form (tenant binding,
    // business invariants): a rejection wins.
    const rejected = later.find((v) => v.type === 'ProposalRejected' && v.logicalCallId === e.logicalCallId);
    const canonical = later.find((v) => v.type === 'ArgumentsCanonicalized' && v.logicalCallId === e.logicalCallId);
    const base = { logicalCallId: e.logicalCallId, turn: e.turn, toolName: e.toolName, origin: e.origin };
    if (rejected?.type === 'ProposalRejected') {
      out.push({ ...base, verdict: 'rejected', code: rejected.code, message: rejected.message });
    } else if (canonical?.type === 'ArgumentsCanonicalized') {
      out.push({ ...base, verdict: 'valid', operationKey: canonical.operationKey });
    } else out.push({ ...base, verdict: 'unvalidated' });
  });
  return out;
}

function checkProposals(r: ModelRunRecord, proposals: readonly ProposalOutcome[]): Violation[] {
  const out: Violation[] = [];
  for (const p of proposals.filter((x) => x.verdict === 'unvalidated')) {
    out.push({
      check: 'every_proposal_validated',
      run: r.name,
      message: `proposal ${p.logicalCallId} (${p.toolName}, turn ${p.turn}) was never canonicalized or rejected`,
    });
  }
  const canonicalized = new Set<string>();
  for (const e of r.events) {
    if (e.type === 'ArgumentsCanonicalized') canonicalized.add(e.logicalCallId);
    if (e.type === 'DispatchIntentRecorded' && !canonicalized.has(e.logicalCallId)) {
      // Compensations are the workflow's own calls, built from a canonical forward call, not proposals.
      const proposed = r.events.some((p) => p.type === 'ToolProposalRecorded' && p.logicalCallId === e.logicalCallId);
      if (proposed) {
        out.push({
          check: 'every_proposal_validated',
          run: r.name,
          message: `${e.logicalCallId} (${e.intent.toolName}) was dispatched without ArgumentsCanonicalized before it`,
        });
      }
    }
  }
  return out;
}

function checkStop(r: ModelRunRecord): { violations: Violation[]; marginMs?: number } {
  const v = (message: string): Violation => ({ check: 'typed_stop_before_deadline', run: r.name, message });
  if (!r.result) return { violations: [v(`the run returned no result: ${r.error ?? 'unknown reason'}`)] };
  const out: Violation[] = [];
  if (!STOP_REASONS.includes(r.result.stopReason))
    out.push(v(`stop reason ${JSON.stringify(r.result.stopReason)} is not one of the typed stop reasons`));
  const completed = r.events.filter((e) => e.type === 'RunCompleted');
  const last = completed.at(-1);
  if (!last || last.type !== 'RunCompleted') {
    out.push(v('the ledger has no RunCompleted'));
    return { violations: out };
  }
  if (completed.length > 1) out.push(v(`the ledger has ${completed.length} RunCompleted events`));
  if (last.stopReason !== r.result.stopReason)
    out.push(v(`the result says ${r.result.stopReason} but the ledger's RunCompleted says ${last.stopReason}`));
  const deadline = Date.parse(r.deadlineAt);
  const at = Date.parse(last.at);
  const grace = r.abortGraceMs ?? DEFAULT_CAPS.abortGraceMs;
  if (!Number.isFinite(deadline) || !Number.isFinite(at)) {
    out.push(v(`unreadable times: deadline ${r.deadlineAt}, RunCompleted at ${last.at}`));
    return { violations: out };
  }
  if (at > deadline + grace)
    out.push(
      v(`RunCompleted at ${last.at} is ${at - deadline} ms after the deadline ${r.deadlineAt} (grace ${grace} ms)`),
    );
  return { violations: out, marginMs: deadline - at };
}

/** Checks the runs against the downstreams' effect logs (every service database the runs could reach). */
export function checkModelRuns(runs: readonly ModelRunRecord[], effects: readonly EffectRow[]): CheckReport {
  const effectsByKey = new Map<string, EffectRow[]>();
  for (const e of effects) effectsByKey.set(e.operationKey, [...(effectsByKey.get(e.operationKey) ?? []), e]);
  const explained = new Set<string>();
  const summaries = runs.map((r): RunSummary => {
    const proposals = proposalOutcomes(r.events);
    const violations = checkProposals(r, proposals);
    const intentKeys = new Set<string>();
    for (const e of r.events) if (e.type === 'DispatchIntentRecorded') intentKeys.add(e.intent.operationKey);
    let effectCount = 0;
    for (const key of intentKeys) {
      explained.add(key);
      const rows = effectsByKey.get(key) ?? [];
      effectCount += rows.length;
      if (rows.length > 1) {
        violations.push({
          check: 'one_effect_per_intent',
          run: r.name,
          message: `${rows.length} effects under one intent ${key} (${rows.map((x) => `${x.service} ${x.kind} ${x.receipt}`).join('; ')})`,
        });
      }
    }
    const stop = checkStop(r);
    violations.push(...stop.violations);
    return {
      name: r.name,
      workflowId: r.workflowId,
      stopReason: r.result?.stopReason ?? 'none',
      detail: r.result?.detail ?? r.error ?? '',
      ...(stop.marginMs !== undefined ? { marginMs: stop.marginMs } : {}),
      turns: r.events.filter((e) => e.type === 'ModelRequestStarted').length,
      proposals,
      intents: intentKeys.size,
      effects: effectCount,
      violations,
    };
  });
  const orphans: Violation[] = effects
    .filter((e) => !explained.has(e.operationKey))
    .map((e) => ({
      check: 'one_effect_per_intent' as const,
      run: '',
      message: `${e.service} holds a ${e.kind} effect (receipt ${e.receipt}) under ${e.operationKey}, which no run recorded an intent for`,
    }));
  return { runs: summaries, violations: [...summaries.flatMap((s) => s.violations), ...orphans] };
}

/**
 * The positive control run beside every real check: three copies of the records, each with one violation
 * planted (a second effect under an intent, a proposal's validation removed, a RunCompleted moved past the
 * deadline). Returns the plants the checker did NOT catch (empty: it caught all three). Records without an
 * intent or a proposal cannot carry the first two plants; those are reported as not plantable.
 */
export function plantedViolationsMissed(
  runs: readonly ModelRunRecord[],
  effects: readonly EffectRow[],
): { readonly missed: readonly string[]; readonly notPlantable: readonly string[] } {
  const missed: string[] = [];
  const notPlantable: string[] = [];
  // Caught: the planted copy has more violations of that check than the records as they are.
  const count = (report: CheckReport, check: CheckId): number =>
    report.violations.filter((v) => v.check === check).length;
  const baseline = checkModelRuns(runs, effects);
  const caught = (report: CheckReport, check: CheckId): boolean => count(report, check) > count(baseline, check);

  const withIntent = runs.find((r) => r.events.some((e) => e.type === 'DispatchIntentRecorded'));
  const intent = withIntent?.events.find((e) => e.type === 'DispatchIntentRecorded');
  if (intent?.type === 'DispatchIntentRecorded') {
    const key = intent.intent.operationKey;
    const doubled = [
      ...effects,
      { service: 'planted', operationKey: key, receipt: 'rcpt_planted_1', kind: 'planted' },
      { service: 'planted', operationKey: key, receipt: 'rcpt_planted_2', kind: 'planted' },
    ];
    if (!caught(checkModelRuns(runs, doubled), 'one_effect_per_intent'))
      missed.push('a second effect under one intent');
  } else notPlantable.push('a second effect under one intent (no run recorded an intent)');

  const withProposal = runs.findIndex((r) => r.events.some((e) => e.type === 'ToolProposalRecorded'));
  if (withProposal >= 0) {
    const r = runs[withProposal]!;
    const proposal = r.events.find((e) => e.type === 'ToolProposalRecorded')!;
    const id = proposal.type === 'ToolProposalRecorded' ? proposal.logicalCallId : '';
    const stripped = r.events.filter(
      (e) => !((e.type === 'ArgumentsCanonicalized' || e.type === 'ProposalRejected') && e.logicalCallId === id),
    );
    const planted = runs.map((x, i) => (i === withProposal ? { ...x, events: stripped } : x));
    if (!caught(checkModelRuns(planted, effects), 'every_proposal_validated'))
      missed.push('a proposal without its validation');
  } else notPlantable.push('a proposal without its validation (no run recorded a proposal)');

  if (runs.length > 0) {
    const first = runs[0]!;
    const late = new Date(Date.parse(first.deadlineAt) + (first.abortGraceMs ?? DEFAULT_CAPS.abortGraceMs) + 1_000);
    const events = first.events.map((e) => (e.type === 'RunCompleted' ? { ...e, at: late.toISOString() } : e));
    const planted = [{ ...first, events }, ...runs.slice(1)];
    if (!caught(checkModelRuns(planted, effects), 'typed_stop_before_deadline'))
      missed.push('a stop recorded after the deadline');
  } else notPlantable.push('a stop after the deadline (no run)');
  return { missed, notPlantable };
}
