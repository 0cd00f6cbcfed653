/**
 * The effects a closed run left standing, read from its raw history alone (`historyEvidence`: every activity's
 * decoded input and result). Terminate, a run timeout and reset run no workflow code, so a run closed that way
 * never compensated or looked up what it started: this is what nobody owns without the console. Pure.
 *
 * A forward call (any call but the saga's own `cmp_` compensations) stands when a `dispatchTool` attempt answered
 * `succeeded` or a `reconcileCall` found the effect under its key (SUCCEEDED), or when it was dispatched and no
 * answer and no lookup settled it (UNKNOWN). It no longer stands when a lookup found no effect (sealed) or a
 * refusal, or its compensation was dispatched and answered (offset, or proven absent). Calls of tools that
 * declare nothing to offset (`compensation: none`) are left out.
 */
import type { Json } from '../src/domain/canonical';
import type { ToolIntent } from '../src/domain/operation-key';
import type { ActivityEvidence, HistoryEvidence } from '../host/client/history-evidence';
import type { ToolRegistry } from '../src/tools/registry';

export interface StandingEffect {
  readonly intent: ToolIntent;
  readonly service: string;
  /** The canonical body the dispatch sent (hashes to `intent.argumentsHash`). */
  readonly body: Json;
  readonly state: 'SUCCEEDED' | 'UNKNOWN';
  readonly receipt?: string;
  /** The tool's declared way to offset it. */
  readonly offsetBy: 'compensate' | 'irreversible';
}

type Rec = Readonly<Record<string, unknown>>;
const rec = (v: unknown): Rec | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : undefined;

function intentOf(a: ActivityEvidence): ToolIntent | undefined {
  const i = rec(rec(a.input)?.intent);
  return i && typeof i.logicalCallId === 'string' && typeof i.operationKey === 'string'
    ? (i as unknown as ToolIntent)
    : undefined;
}

interface Seen {
  intent: ToolIntent;
  service: string;
  body: Json;
  effect: boolean;
  none: boolean;
  answered: boolean;
  receipt?: string;
}

export function standingEffects(evidence: HistoryEvidence, tools: ToolRegistry): StandingEffect[] {
  const calls = new Map<string, Seen>();
  const offset = new Set<string>();
  for (const a of evidence.activities) {
    if (a.activityType !== 'dispatchTool') continue;
    const intent = intentOf(a);
    const input = rec(a.input);
    if (!intent || !input) continue;
    const result = rec(a.result);
    if (intent.providerCallId === 'saga') {
      const forwardId = intent.logicalCallId.replace(/^cmp_/, '');
      const absent = tools.get(intent.toolName)?.forwardAbsentReasons ?? [];
      if (result?.outcome === 'succeeded' || absent.includes(String(result?.errorCode ?? ''))) offset.add(forwardId);
      continue;
    }
    const seen: Seen = calls.get(intent.logicalCallId) ?? {
      intent,
      service: String(input.service ?? ''),
      body: (input.body ?? null) as Json,
      effect: false,
      none: false,
      answered: false,
    };
    if (a.closedAs === 'completed' && result) {
      seen.answered = true;
      if (result.outcome === 'succeeded') {
        seen.effect = true;
        if (typeof result.receipt === 'string') seen.receipt = result.receipt;
      } else if (!seen.effect) seen.none = true;
    }
    calls.set(intent.logicalCallId, seen);
  }
  for (const a of evidence.activities) {
    if (a.activityType !== 'reconcileCall' || a.closedAs !== 'completed') continue;
    const seen = calls.get(intentOf(a)?.logicalCallId ?? '');
    const r = rec(a.result);
    if (!seen || !r) continue;
    seen.answered = true;
    if (r.kind === 'found' && r.status === 'completed') {
      seen.effect = true;
      seen.none = false;
      if (typeof r.receipt === 'string') seen.receipt = r.receipt;
    } else if (!seen.effect) seen.none = true;
  }
  const out: StandingEffect[] = [];
  for (const [id, s] of calls) {
    const kind = tools.get(s.intent.toolName)?.compensation.kind;
    if (kind === undefined || kind === 'none' || offset.has(id) || (s.none && !s.effect)) continue;
    out.push({
      intent: s.intent,
      service: s.service,
      body: s.body,
      state: s.effect ? 'SUCCEEDED' : 'UNKNOWN',
      ...(s.receipt !== undefined ? { receipt: s.receipt } : {}),
      offsetBy: kind,
    });
  }
  return out;
}
