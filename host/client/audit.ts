/**
 * The audit behind `ledgerloop audit`: for every call that may have had an effect (it has a DispatchIntentRecorded,
 * ToolResultRecorded or ToolEffectReconciled event, or a dispatchTool activity in the history), does the durable
 * record name who (principal, tenant), under which policy, on which worker, under which operation key and
 * arguments hash, with which receipt and fence? Each field is read from the ledger and cross-checked against the
 * raw history's activity inputs and results (HistoryEvidence). Pure: no I/O, no clock.
 */
import { hashCanonical } from '../../src/domain/canonical';
import type { LedgerEvent } from '../../src/domain/ledger-events';
import { reduce, type CallView, type Projection } from '../../src/domain/reducer';
import { MCP_TARGET_PREFIX } from '../../src/domain/transport';
import type { ActivityEvidence, HistoryEvidence } from './history-evidence';

/** The fields every effect must name, in checklist order, with their display labels. */
export const FIELD_LABELS = {
  principal: 'principal',
  tenant: 'tenant',
  policyVersion: 'policy version',
  workerIdentity: 'worker identity',
  operationKey: 'operation key',
  argumentsHash: 'arguments hash',
  receipt: 'receipt',
  fence: 'fence',
} as const;
export type AuditField = keyof typeof FIELD_LABELS;
export const AUDIT_FIELDS = Object.keys(FIELD_LABELS) as readonly AuditField[];

/**
 * ok: the ledger names it and the history agrees. warn: named and consistent, with a note worth reading.
 * na: does not apply to this call (a FAILED call has no receipt). missing / mismatch: a finding.
 */
export type CheckStatus = 'ok' | 'warn' | 'na' | 'missing' | 'mismatch';

export interface AuditCheck {
  readonly field: AuditField;
  readonly status: CheckStatus;
  /** The value the ledger names. */
  readonly ledger?: string;
  /** The distinct values the raw history names. */
  readonly history?: readonly string[];
  readonly note?: string;
}

export interface CallAudit {
  readonly logicalCallId: string;
  readonly toolName: string;
  /** The call's state in the projection of the audited ledger (`?` when the ledger does not know the call). */
  readonly state: string;
  readonly checks: readonly AuditCheck[];
  readonly ok: boolean;
}

export interface AuditReport {
  readonly ok: boolean;
  /** Number of missing or mismatched fields over all calls. */
  readonly problems: number;
  readonly calls: readonly CallAudit[];
  /** Findings about the history as a whole (undecodable payloads). */
  readonly notes: readonly string[];
}

export function isProblem(status: CheckStatus): boolean {
  return status === 'missing' || status === 'mismatch';
}

// ---- reading untyped decoded payloads -------------------------------------------------------------------------

type Rec = Readonly<Record<string, unknown>>;
const rec = (v: unknown): Rec | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Rec) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const numStr = (v: unknown): string | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;
const defined = <T>(xs: readonly (T | undefined)[]): T[] => xs.filter((x): x is T => x !== undefined);
const distinct = (xs: readonly string[]): string[] => [...new Set(xs)];

function callIdOf(a: ActivityEvidence): string | undefined {
  return str(rec(rec(a.input)?.intent)?.logicalCallId);
}

function bodyHash(input: unknown): string | undefined {
  const body = rec(input)?.body;
  if (body === undefined) return undefined;
  try {
    return hashCanonical(body);
  } catch {
    return 'unhashable body';
  }
}

// ---- comparing one field --------------------------------------------------------------------------------------

interface CompareOptions {
  readonly required: boolean;
  /** true: the ledger value must be one of the history's values; false: every history value must equal it. */
  readonly membership?: boolean;
  readonly naNote?: string;
  readonly missingNote?: string;
}

function compare(
  field: AuditField,
  ledger: string | undefined,
  historyValues: readonly string[],
  o: CompareOptions,
): AuditCheck {
  const history = distinct(historyValues);
  const base = { field, ...(ledger !== undefined ? { ledger } : {}), ...(history.length > 0 ? { history } : {}) };
  if (ledger === undefined && history.length === 0) {
    return o.required
      ? { ...base, status: 'missing', note: o.missingNote ?? 'named neither by the ledger nor by the history' }
      : { ...base, status: 'na', ...(o.naNote ? { note: o.naNote } : {}) };
  }
  if (ledger === undefined) return { ...base, status: 'missing', note: o.missingNote ?? 'the ledger does not name it' };
  if (history.length === 0) return { ...base, status: 'missing', note: 'not found in the raw history' };
  const agrees = o.membership ? history.includes(ledger) : history.every((v) => v === ledger);
  return agrees
    ? { ...base, status: 'ok' }
    : { ...base, status: 'mismatch', note: `the history names ${history.join(', ')}` };
}

/** A ledger-internal disagreement (e.g. the intent's key differs from ArgumentsCanonicalized's) overrides `check`. */
function alsoLedger(check: AuditCheck, other: string | undefined, what: string): AuditCheck {
  if (other === undefined || check.ledger === undefined || other === check.ledger) return check;
  return { ...check, status: 'mismatch', note: `${what} says ${other}` };
}

/**
 * Worker identity has a second, server-side witness: ActivityTaskStarted.identity. It names the worker when no
 * attempt reported back, and a disagreement with the self-reported identity is worth a warning.
 */
function workerCheck(check: AuditCheck, started: readonly string[]): AuditCheck {
  if (started.length === 0) return check;
  if (check.status === 'missing' && check.ledger === undefined && check.history === undefined) {
    return {
      field: 'workerIdentity',
      status: 'ok',
      history: started,
      note: 'named by ActivityTaskStarted only (no attempt reported back)',
    };
  }
  if (check.status === 'ok' && !started.includes(check.ledger!)) {
    return { ...check, status: 'warn', note: `Temporal recorded worker ${started.join(', ')} for the attempt` };
  }
  return check;
}

// ---- one call ------------------------------------------------------------------------------------------------

/** The event variant(s) whose `type` admits T (works for variants that share a body, like the two Authorization*). */
type Of<T extends LedgerEvent['type'], E = LedgerEvent> = E extends { readonly type: infer U }
  ? T extends U
    ? E
    : never
  : never;

function lastOf<T extends LedgerEvent['type']>(events: readonly LedgerEvent[], type: T, id: string): Of<T> | undefined {
  let found: Of<T> | undefined;
  for (const e of events) if (e.type === type && 'logicalCallId' in e && e.logicalCallId === id) found = e as Of<T>;
  return found;
}

/** What the ledger and the raw history say about one call: the ledger's events and the activities' records. */
function witnessesOf(
  id: string,
  events: readonly LedgerEvent[],
  view: CallView | undefined,
  evidence: HistoryEvidence,
) {
  const dispatches = evidence.activities.filter((a) => a.activityType === 'dispatchTool' && callIdOf(a) === id);
  const completed = dispatches.filter((a) => a.closedAs === 'completed');
  const result = lastOf(events, 'ToolResultRecorded', id);
  const reconciled = lastOf(events, 'ToolEffectReconciled', id);
  const state = view?.state ?? '?';
  return {
    view,
    state,
    intent: lastOf(events, 'DispatchIntentRecorded', id)?.intent,
    canon: lastOf(events, 'ArgumentsCanonicalized', id),
    allowed: lastOf(events, 'AuthorizationAllowed', id),
    result,
    dispatches,
    completed,
    reconciles: evidence.activities.filter((a) => a.activityType === 'reconcileCall' && callIdOf(a) === id),
    operator: evidence.updates.filter((u) => u.name === 'resolveCall' && str(rec(u.input)?.logicalCallId) === id),
    inputs: dispatches.map((a) => rec(rec(a.input)?.intent)),
    // A response came back from a dispatch (or the call has an effect): then fence and worker must be on record.
    responded: state === 'SUCCEEDED' || (result?.attempts ?? 0) > 0 || completed.length > 0,
    settledVia: reconciled ? reconciled.via : 'dispatch',
  };
}
type Witnesses = ReturnType<typeof witnessesOf>;

const fromResults = (w: Witnesses, k: string, as = str): string[] =>
  defined(w.completed.map((a) => as(rec(a.result)?.[k])));

/** Who, for whom, under which policy and with which key and arguments: the intent against the dispatched inputs. */
function identityChecks(w: Witnesses) {
  const { intent, allowed, canon } = w;
  const noIntent = 'no DispatchIntentRecorded for this call in the ledger';
  const ident = (field: AuditField, key: keyof NonNullable<typeof intent>): AuditCheck =>
    compare(field, intent ? str(intent[key]) : undefined, defined(w.inputs.map((i) => str(i?.[key]))), {
      required: true,
      ...(intent ? {} : { missingNote: noIntent }),
    });
  const byAuth = (field: AuditField, key: 'principalId' | 'tenant' | 'policyVersion'): AuditCheck =>
    alsoLedger(ident(field, key), allowed?.[key], 'AuthorizationAllowed');
  const byCanon = (field: AuditField, key: 'operationKey' | 'argumentsHash'): AuditCheck =>
    alsoLedger(ident(field, key), canon?.[key], 'ArgumentsCanonicalized');
  let argumentsHash = byCanon('argumentsHash', 'argumentsHash');
  const wrongBody = defined(w.dispatches.map((a) => bodyHash(a.input))).find((h) => h !== argumentsHash.ledger);
  if (argumentsHash.status === 'ok' && wrongBody !== undefined) {
    argumentsHash = { ...argumentsHash, status: 'mismatch', note: `the dispatched body hashes to ${wrongBody}` };
  }
  return {
    principal: byAuth('principal', 'principalId'),
    tenant: byAuth('tenant', 'tenant'),
    policyVersion: byAuth('policyVersion', 'policyVersion'),
    operationKey: byCanon('operationKey', 'operationKey'),
    argumentsHash,
  };
}

/** The fence and the worker an answering attempt reported, against the ledger's result. */
function attemptChecks(w: Witnesses): { fence: AuditCheck; workerIdentity: AuditCheck } {
  const { result } = w;
  const fence = compare(
    'fence',
    result?.fence !== undefined ? String(result.fence) : undefined,
    fromResults(w, 'fence', numStr),
    {
      required: w.responded,
      membership: true,
      naNote: 'no dispatch attempt reported back',
      missingNote: `no dispatch attempt reported a fence (settled via ${w.settledVia})`,
    },
  );
  const workerIdentity = workerCheck(
    compare('workerIdentity', str(result?.workerIdentity), fromResults(w, 'workerIdentity'), {
      required: w.responded || w.dispatches.length > 0,
      membership: true,
      naNote: 'no dispatch attempt reached a worker',
    }),
    distinct(defined(w.dispatches.map((a) => a.startedIdentity))),
  );
  return { fence, workerIdentity };
}

/** The receipt of a SUCCEEDED call, from a dispatch, a reconciliation or the operator; none for any other state. */
function receiptCheck(w: Witnesses): AuditCheck {
  const { state } = w;
  if (state === 'FAILED') return { field: 'receipt', status: 'na', note: 'the call FAILED: no effect, no receipt' };
  if (state !== 'SUCCEEDED') {
    const note = state === 'UNKNOWN' ? 'the outcome is still UNKNOWN' : `the call is not settled (${state})`;
    return { field: 'receipt', status: 'missing', note };
  }
  const sources = [
    ...fromResults(w, 'receipt'),
    ...defined(w.reconciles.filter((a) => a.closedAs === 'completed').map((a) => str(rec(a.result)?.receipt))),
    ...defined(w.operator.map((u) => str(rec(u.input)?.receipt))),
  ];
  // An MCP server gives no receipt (a tools/call result names no effect): every dispatch of the call went to one.
  const routes = distinct(defined(w.dispatches.map((a) => str(rec(a.input)?.route))));
  const receiptless = routes.length > 0 && routes.every((r) => r.startsWith(MCP_TARGET_PREFIX));
  return compare('receipt', w.view?.receipt ?? undefined, sources, {
    required: !receiptless,
    naNote: `an MCP server gives no receipt (${routes.join(', ')}); settled via ${w.settledVia}`,
    membership: true,
    missingNote:
      w.settledVia === 'operator' ? 'the operator settled the call without a receipt' : 'the effect has no receipt',
  });
}

function auditCall(
  id: string,
  events: readonly LedgerEvent[],
  view: CallView | undefined,
  evidence: HistoryEvidence,
): CallAudit {
  const w = witnessesOf(id, events, view, evidence);
  const { principal, tenant, policyVersion, operationKey, argumentsHash } = identityChecks(w);
  const { fence, workerIdentity } = attemptChecks(w);
  // In AUDIT_FIELDS order.
  const checks = [
    principal,
    tenant,
    policyVersion,
    workerIdentity,
    operationKey,
    argumentsHash,
    receiptCheck(w),
    fence,
  ];
  const toolName = view?.toolName ?? w.intent?.toolName ?? str(w.inputs.find((i) => i !== undefined)?.toolName) ?? '?';
  return { logicalCallId: id, toolName, state: w.state, checks, ok: !checks.some((c) => isProblem(c.status)) };
}

// ---- the run -------------------------------------------------------------------------------------------------

const EFFECT_EVENTS = new Set<LedgerEvent['type']>([
  'DispatchIntentRecorded',
  'ToolResultRecorded',
  'ToolEffectReconciled',
]);

/**
 * Audits every effect-bearing call of a run: the ledger's events cross-checked against the history's evidence.
 * `projection` is the workflow's own (from the ledger query); without it the events are reduced here.
 */
export function auditRun(
  events: readonly LedgerEvent[],
  evidence: HistoryEvidence,
  projection: Projection = reduce(events),
): AuditReport {
  const ids: string[] = [];
  const add = (id: string | undefined): void => {
    if (id !== undefined && !ids.includes(id)) ids.push(id);
  };
  for (const e of events) if (EFFECT_EVENTS.has(e.type) && 'logicalCallId' in e) add(e.logicalCallId);
  for (const a of evidence.activities) if (a.activityType === 'dispatchTool') add(callIdOf(a));

  const calls = ids.map((id) => auditCall(id, events, projection.calls[id], evidence));
  const undecodable = [...evidence.activities, ...evidence.updates].filter((x) => x.decodeError !== undefined);
  const notes = undecodable.length
    ? [
        `${undecodable.length} payload(s) in the history could not be decoded (${undecodable[0]!.decodeError}); are the codec keys set?`,
      ]
    : [];
  const problems =
    calls.reduce((n, c) => n + c.checks.filter((k) => isProblem(k.status)).length, 0) + undecodable.length;
  return { ok: problems === 0, problems, calls, notes };
}
