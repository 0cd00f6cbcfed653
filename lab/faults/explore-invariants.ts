/**
 * The explorer's universal invariants: what must hold on the durable records of EVERY run, whatever its case
 * expected. Pure: it takes the records (the ledger a fresh worker rebuilt, the downstreams' effect and request
 * logs, the replay and hash checks) and returns every violation it finds, each naming its invariant, the key or
 * call it concerns, and what the records say. docs/fault-protocol.md ("The explorer") lists them.
 *
 *   (a) under a safe strategy, at most one business effect per intent, and every effect in a downstream's
 *       effect log matches exactly one intent (`DispatchIntentRecorded`): no orphan effect, no unknown key;
 *   (b) every forward effect still standing when a run stops other than `completed` is compensated (and the
 *       compensating effect exists downstream), or named in the stop's `leftStanding` field for an operator (the
 *       structured field of `RunCompleted`, never the stop's prose); every call left UNKNOWN at such a stop is
 *       named there too, and every name there is a call of the run in the state it says;
 *   (c) no call FAILED while a downstream holds an effect under its key; no call a downstream saw a request of
 *       ends in any state but SUCCEEDED, FAILED or UNKNOWN; no dispatch before its intent; no request admitted
 *       under a stale fence or with other arguments than its key was first used with;
 *   (d) a fresh worker rebuilds the same projection hash, replay raises no determinism error, and the run
 *       closes before its deadline plus the grace period.
 */
import type { LedgerEvent, LeftStanding } from '../../src/domain/ledger-events';
import type { CallView, Projection } from '../../src/domain/reducer';
import type { RetryStrategy } from '../../src/domain/run';
import { REFUSED_OUTCOMES } from './request-log';

/** One committed business effect, as a downstream's `idem_effects` table records it. */
export interface EffectRow {
  readonly service: string;
  readonly operationKey: string;
  readonly receipt: string;
  readonly kind: string;
}

/** One mutating request, as a downstream's `idem_requests` table records it (arrival order by `id`). */
export interface RequestEntry {
  readonly service: string;
  readonly id: number;
  readonly operationKey: string;
  readonly argumentsHash: string;
  readonly fence: number;
  readonly outcome: string;
}

/** Everything the checker reads about one run. */
export interface RunRecords {
  readonly strategy: RetryStrategy;
  /** The run's ledger events as a fresh worker rebuilt them (empty when it could not). */
  readonly events: readonly LedgerEvent[];
  /** The rebuilt projection; undefined when no worker could rebuild the run. */
  readonly projection?: Projection;
  readonly effects: readonly EffectRow[];
  readonly requests: readonly RequestEntry[];
  /** The hash the original worker answered (at the fault, or at the end); '' when it was never measured. */
  readonly hashBefore: string;
  /** The hash a new worker rebuilt for the same number of events; '' when it could not. */
  readonly hashAfter: string;
  /** Set when Worker.runReplayHistory raised (a determinism error) or no worker could rebuild the ledger. */
  readonly replayError?: string;
  /** The run closed with a result before its deadline plus the grace period. */
  readonly completed: boolean;
}

export const INVARIANTS = {
  one_effect_per_intent: { group: 'a', text: 'at most one business effect per intent (safe strategies)' },
  effect_matches_intent: {
    group: 'a',
    text: 'every effect in a downstream effect log matches exactly one DispatchIntentRecorded (safe strategies)',
  },
  standing_effect_settled: {
    group: 'b',
    text: 'a forward effect standing at a stop other than completed is compensated, or named in the stop\u2019s leftStanding field',
  },
  unknown_named_at_stop: {
    group: 'b',
    text: 'every call UNKNOWN at a stop other than completed is in leftStanding, and every leftStanding entry is a call of the run in the state it names',
  },
  failed_means_no_effect: { group: 'c', text: 'no call is FAILED while a downstream holds an effect under its key' },
  sent_call_settled: {
    group: 'c',
    text: 'a call a downstream saw a request of ends SUCCEEDED, FAILED or UNKNOWN (never as if it had not been sent)',
  },
  intent_before_dispatch: { group: 'c', text: 'no dispatch precedes its intent (reducer violations are empty)' },
  fence_and_arguments: {
    group: 'c',
    text: 'no request is admitted under a stale fence or with other arguments than its key was first used with',
  },
  projection_rebuilt: { group: 'd', text: 'a fresh worker rebuilds the same projection hash' },
  replay_deterministic: { group: 'd', text: 'replay of the history raises no determinism error' },
  closed_before_deadline: { group: 'd', text: 'the run closes before its deadline plus the grace period' },
} as const satisfies Record<string, { group: 'a' | 'b' | 'c' | 'd'; text: string }>;

export type InvariantId = keyof typeof INVARIANTS;
export const INVARIANT_IDS = Object.keys(INVARIANTS) as InvariantId[];

export interface InvariantViolation {
  readonly invariant: InvariantId;
  /** One sentence: what the records say. */
  readonly message: string;
  /** The operation key or logical call id concerned, when there is one. */
  readonly subject?: string;
}

/** The strategies whose retries reuse the intent's key; `blind_retry` is the lab's demonstration of the bug. */
export const SAFE_STRATEGIES: readonly RetryStrategy[] = ['same_key_replay', 'check_receipt'];

interface IntentInfo {
  readonly toolName: string;
  readonly argumentsHashes: Set<string>;
  readonly calls: Set<string>;
}

/** Intents by operation key: every DispatchIntentRecorded, plus calls a continued run carried in its projection. */
function intentsByKey(events: readonly LedgerEvent[], projection: Projection | undefined): Map<string, IntentInfo> {
  const out = new Map<string, IntentInfo>();
  const add = (key: string, toolName: string, argumentsHash: string, call: string): void => {
    const info = out.get(key) ?? { toolName, argumentsHashes: new Set<string>(), calls: new Set<string>() };
    info.argumentsHashes.add(`${toolName}|${argumentsHash}`);
    info.calls.add(call);
    out.set(key, info);
  };
  for (const e of events) {
    if (e.type === 'DispatchIntentRecorded')
      add(e.intent.operationKey, e.intent.toolName, e.intent.argumentsHash, e.logicalCallId);
  }
  for (const c of Object.values(projection?.calls ?? {})) {
    if (c.intentRecorded && c.operationKey && !out.has(c.operationKey))
      add(c.operationKey, c.toolName, c.argumentsHash ?? '', c.logicalCallId);
  }
  return out;
}

/** Every key a call's attempts used (the intent's key, and any other key an attempt sent). */
function keysOfCalls(events: readonly LedgerEvent[], calls: readonly CallView[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (call: string, key: string | null | undefined): void => {
    if (!key) return;
    const set = out.get(call) ?? new Set<string>();
    set.add(key);
    out.set(call, set);
  };
  for (const c of calls) add(c.logicalCallId, c.operationKey);
  for (const e of events) {
    if (e.type === 'DispatchIntentRecorded') add(e.logicalCallId, e.intent.operationKey);
    if (e.type === 'ToolAttemptStarted') add(e.logicalCallId, e.keyUsed);
  }
  return out;
}

function countBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const i of items) out.set(key(i), [...(out.get(key(i)) ?? []), i]);
  return out;
}

function checkEffectsMatchIntents(r: RunRecords, intents: Map<string, IntentInfo>): InvariantViolation[] {
  if (!SAFE_STRATEGIES.includes(r.strategy)) return [];
  const out: InvariantViolation[] = [];
  const byKey = countBy(r.effects, (e) => `${e.service}|${e.operationKey}`);
  for (const [, rows] of byKey) {
    const { service, operationKey } = rows[0]!;
    if (rows.length > 1) {
      out.push({
        invariant: 'one_effect_per_intent',
        subject: operationKey,
        message: `${service} committed ${rows.length} effects under ${operationKey} (receipts ${rows.map((e) => e.receipt).join(', ')})`,
      });
    }
    const intent = intents.get(operationKey);
    if (!intent) {
      out.push({
        invariant: 'effect_matches_intent',
        subject: operationKey,
        message: `${service} holds a ${rows[0]!.kind} effect (receipt ${rows[0]!.receipt}) under ${operationKey}, which no DispatchIntentRecorded names: an orphan effect`,
      });
    } else if (intent.argumentsHashes.size > 1) {
      out.push({
        invariant: 'effect_matches_intent',
        subject: operationKey,
        message: `the effect under ${operationKey} on ${service} matches ${intent.argumentsHashes.size} different intents (calls ${[...intent.calls].join(', ')}): the key names more than one intent`,
      });
    }
  }
  // One business intent (tool and canonical arguments) must not take effect under two keys either.
  const effectiveKeys = new Set(r.effects.map((e) => e.operationKey));
  const byIntent = new Map<string, string[]>();
  for (const [key, info] of intents) {
    if (!effectiveKeys.has(key)) continue;
    for (const ti of info.argumentsHashes) byIntent.set(ti, [...(byIntent.get(ti) ?? []), key]);
  }
  for (const [ti, keys] of byIntent) {
    if (keys.length < 2) continue;
    out.push({
      invariant: 'one_effect_per_intent',
      subject: keys.join(','),
      message: `one business intent (${ti.split('|')[0]} with arguments ${ti.split('|')[1]?.slice(0, 12)}…) took effect ${keys.length} times, under keys ${keys.join(', ')}`,
    });
  }
  return out;
}

/** The run's stop as its stop event records it: the reason, the prose, and the structured `leftStanding`. */
export interface StopRecord {
  readonly reason: string;
  readonly detail: string;
  readonly leftStanding: readonly LeftStanding[];
}

export function lastStop(events: readonly LedgerEvent[], projection: Projection | undefined): StopRecord | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'RunCompleted')
      return { reason: e.stopReason, detail: e.detail, leftStanding: e.leftStanding ?? [] };
  }
  return projection?.stopReason
    ? { reason: projection.stopReason, detail: '', leftStanding: projection.leftStanding ?? [] }
    : undefined;
}

function checkStandingEffects(r: RunRecords, callKeys: Map<string, Set<string>>): InvariantViolation[] {
  const stop = lastStop(r.events, r.projection);
  if (!stop || stop.reason === 'completed' || !r.projection) return [];
  const effectKeys = new Set(r.effects.map((e) => e.operationKey));
  const calls = r.projection.calls;
  const registeredKey = new Map<string, string>();
  for (const e of r.events) if (e.type === 'CompensationRegistered') registeredKey.set(e.forwardCallId, e.operationKey);
  // Only the structured field counts: a call id that merely occurs in the stop's prose names nothing.
  const left = new Set(stop.leftStanding.map((l) => l.logicalCallId));
  const out: InvariantViolation[] = [];
  for (const c of Object.values(calls)) {
    if (c.origin !== 'model') continue;
    const held = [...(callKeys.get(c.logicalCallId) ?? [])].filter((k) => effectKeys.has(k));
    if (held.length === 0) continue;
    const compKey =
      registeredKey.get(c.logicalCallId) ??
      (c.compensationCallId ? (calls[c.compensationCallId]?.operationKey ?? undefined) : undefined);
    if (c.compensation === 'OFFSET') {
      if (compKey !== undefined && effectKeys.has(compKey)) continue;
      out.push({
        invariant: 'standing_effect_settled',
        subject: c.logicalCallId,
        message: `the ledger says ${c.logicalCallId} (${c.toolName}) was offset, but no downstream holds an effect under its compensation key ${compKey ?? '(none registered)'}`,
      });
      continue;
    }
    if (left.has(c.logicalCallId)) continue;
    out.push({
      invariant: 'standing_effect_settled',
      subject: c.logicalCallId,
      message: `the run stopped ${stop.reason} while ${c.logicalCallId} (${c.toolName}, ${c.state}) has an effect under ${held.join(', ')}; it was ${c.compensation ? `compensated ${c.compensation}` : 'not compensated'} and the stop's leftStanding does not name it (${stop.leftStanding.length === 0 ? 'it is empty' : `it names ${[...left].join(', ')}`})`,
    });
  }
  return out;
}

function checkLeftStanding(r: RunRecords): InvariantViolation[] {
  const stop = lastStop(r.events, r.projection);
  if (!stop || !r.projection) return [];
  const calls = r.projection.calls;
  const out: InvariantViolation[] = [];
  const named = new Map(stop.leftStanding.map((l) => [l.logicalCallId, l] as const));
  // A compensation whose outcome is unknown is named through its forward call (why `compensation_unsettled`).
  const forwardOf = new Map<string, string>();
  for (const c of Object.values(calls)) if (c.compensationCallId) forwardOf.set(c.compensationCallId, c.logicalCallId);
  const namedThroughForward = (id: string): boolean => {
    const forward = forwardOf.get(id);
    return forward !== undefined && named.get(forward)?.why === 'compensation_unsettled';
  };
  if (stop.reason !== 'completed') {
    for (const c of Object.values(calls)) {
      if (c.state !== 'UNKNOWN' || named.has(c.logicalCallId) || namedThroughForward(c.logicalCallId)) continue;
      out.push({
        invariant: 'unknown_named_at_stop',
        subject: c.logicalCallId,
        message: `the run stopped ${stop.reason} with ${c.logicalCallId} (${c.toolName}) UNKNOWN, and the stop's leftStanding does not name it for an operator`,
      });
    }
  }
  for (const l of stop.leftStanding) {
    const c = calls[l.logicalCallId];
    if (!c) {
      out.push({
        invariant: 'unknown_named_at_stop',
        subject: l.logicalCallId,
        message: `the stop's leftStanding names ${l.logicalCallId}, which is no call of the run`,
      });
    } else if (
      c.state !== l.state ||
      (l.operationKey !== '' && c.operationKey !== null && c.operationKey !== l.operationKey)
    ) {
      out.push({
        invariant: 'unknown_named_at_stop',
        subject: l.logicalCallId,
        message: `the stop's leftStanding says ${l.logicalCallId} is ${l.state} under ${l.operationKey || '(no key)'}; the ledger says ${c.state} under ${c.operationKey ?? '(no key)'}`,
      });
    }
  }
  return out;
}

/** The states a call that a downstream saw a request of may end in. */
const SENT_END_STATES: ReadonlySet<string> = new Set(['SUCCEEDED', 'FAILED', 'UNKNOWN']);

function checkSentCalls(r: RunRecords, callKeys: Map<string, Set<string>>): InvariantViolation[] {
  if (!r.projection || !r.completed) return [];
  const seen = new Map<string, RequestEntry>();
  for (const q of r.requests) if (!seen.has(q.operationKey)) seen.set(q.operationKey, q);
  for (const e of r.effects)
    if (!seen.has(e.operationKey))
      seen.set(e.operationKey, {
        service: e.service,
        id: 0,
        operationKey: e.operationKey,
        argumentsHash: '',
        fence: 0,
        outcome: 'effect',
      });
  const out: InvariantViolation[] = [];
  for (const c of Object.values(r.projection.calls)) {
    if (SENT_END_STATES.has(c.state)) continue;
    const key = [...(callKeys.get(c.logicalCallId) ?? [])].find((k) => seen.has(k));
    if (key === undefined) continue;
    const q = seen.get(key)!;
    out.push({
      invariant: 'sent_call_settled',
      subject: c.logicalCallId,
      message: `${c.logicalCallId} (${c.toolName}) ends ${c.state} in the ledger, but ${q.service} saw a request under ${key} (outcome ${q.outcome}): a call that may have sent must end SUCCEEDED, FAILED or UNKNOWN`,
    });
  }
  return out;
}

function checkFailedCalls(r: RunRecords, callKeys: Map<string, Set<string>>): InvariantViolation[] {
  if (!r.projection) return [];
  const effectKeys = new Map(r.effects.map((e) => [e.operationKey, e] as const));
  const out: InvariantViolation[] = [];
  for (const c of Object.values(r.projection.calls)) {
    if (c.state !== 'FAILED') continue;
    for (const key of callKeys.get(c.logicalCallId) ?? []) {
      const effect = effectKeys.get(key);
      if (!effect) continue;
      out.push({
        invariant: 'failed_means_no_effect',
        subject: c.logicalCallId,
        message: `${c.logicalCallId} (${c.toolName}) is FAILED${c.errorCode ? ` (${c.errorCode})` : ''} but ${effect.service} holds its effect under ${key} (receipt ${effect.receipt})`,
      });
    }
  }
  return out;
}

function checkRequestLog(requests: readonly RequestEntry[]): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  const maxFence = new Map<string, number>();
  const firstHash = new Map<string, string>();
  for (const q of [...requests].sort((a, b) =>
    a.service === b.service ? a.id - b.id : a.service < b.service ? -1 : 1,
  )) {
    if (REFUSED_OUTCOMES.has(q.outcome)) continue;
    const k = `${q.service}|${q.operationKey}`;
    const highest = maxFence.get(k);
    if (highest !== undefined && q.fence < highest) {
      out.push({
        invariant: 'fence_and_arguments',
        subject: q.operationKey,
        message: `${q.service} admitted request #${q.id} under ${q.operationKey} with fence ${q.fence}, below the fence ${highest} it had already admitted (outcome ${q.outcome})`,
      });
    }
    maxFence.set(k, Math.max(highest ?? q.fence, q.fence));
    const first = firstHash.get(k);
    if (first === undefined) firstHash.set(k, q.argumentsHash);
    else if (first !== q.argumentsHash) {
      out.push({
        invariant: 'fence_and_arguments',
        subject: q.operationKey,
        message: `${q.service} admitted request #${q.id} under ${q.operationKey} with other arguments than the key was first used with (outcome ${q.outcome})`,
      });
    }
  }
  return out;
}

function checkRebuild(r: RunRecords): InvariantViolation[] {
  const out: InvariantViolation[] = [];
  if (!r.projection || r.hashAfter === '') {
    out.push({ invariant: 'projection_rebuilt', message: 'no fresh worker could rebuild the run\u2019s projection' });
  } else if (r.hashBefore !== '' && r.hashBefore !== r.hashAfter) {
    out.push({
      invariant: 'projection_rebuilt',
      message: `the original worker answered projection hash ${r.hashBefore.slice(0, 16)}…, a fresh worker rebuilt ${r.hashAfter.slice(0, 16)}… for the same events`,
    });
  }
  if (r.replayError !== undefined) out.push({ invariant: 'replay_deterministic', message: r.replayError });
  if (!r.completed)
    out.push({
      invariant: 'closed_before_deadline',
      message: 'the run did not close with a result before its deadline plus the grace period',
    });
  return out;
}

/** Checks every universal invariant on one run's records; returns the violations (empty: all held). */
export function checkInvariants(r: RunRecords): InvariantViolation[] {
  const calls = Object.values(r.projection?.calls ?? {});
  const intents = intentsByKey(r.events, r.projection);
  const callKeys = keysOfCalls(r.events, calls);
  const out: InvariantViolation[] = [];
  if (r.projection) out.push(...checkEffectsMatchIntents(r, intents));
  out.push(...checkStandingEffects(r, callKeys));
  out.push(...checkLeftStanding(r));
  out.push(...checkFailedCalls(r, callKeys));
  out.push(...checkSentCalls(r, callKeys));
  for (const v of r.projection?.violations ?? [])
    out.push({ invariant: 'intent_before_dispatch', message: `the reducer recorded: ${v}` });
  out.push(...checkRequestLog(r.requests));
  out.push(...checkRebuild(r));
  return out;
}

/** `a`, `b`, ... of the invariants violated, sorted, for the progress line and the table. */
export function violatedGroups(violations: readonly InvariantViolation[]): string {
  return [...new Set(violations.map((v) => INVARIANTS[v.invariant].group))].sort().join('');
}
