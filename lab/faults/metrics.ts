/**
 * The metrics a fault-protocol case can assert on, each read from a durable record after the case ran: the
 * Temporal history, the workflow's ledger rebuilt by a fresh worker, or the downstream services' own databases.
 * Nothing here is counted in the runner's memory.
 */

export type MetricType = 'number' | 'boolean' | 'string';
export type MetricValue = number | boolean | string;

export interface MetricSpec {
  readonly type: MetricType;
  /** Which durable record it comes from, and how. */
  readonly source: string;
}

export const METRICS = {
  attempt_count: {
    type: 'number',
    source:
      'Temporal history: the attempt number of every dispatchTool activity as its closing ActivityTaskStarted event records it, summed over the run',
  },
  logical_call_count: {
    type: 'number',
    source: 'the ledger (replayed): logical calls whose DispatchIntentRecorded exists',
  },
  proposal_count: { type: 'number', source: 'the ledger (replayed): ToolProposalRecorded events' },
  retry_amplification: {
    type: 'number',
    source: 'attempt_count / logical_call_count (0 when no call was dispatched), rounded to 2 decimals',
  },
  dispatch_count: {
    type: 'number',
    source:
      "the downstreams' own databases (GET /admin/stats?key=&prefix=true): every admitted mutating request of this case, whatever its outcome (requests refused before the idempotency rules are counted per code, GET /admin/refusals)",
  },
  business_effect_count: {
    type: 'number',
    source: "the downstreams' own databases (GET /admin/stats): every business effect they committed in this case",
  },
  refused_dispatch_count: {
    type: 'number',
    source:
      "the downstreams' request logs (idem_requests, read-only): requests refused by the contract (stale fence, other arguments, sealed key, in progress, bad capability, invalid request)",
  },
  stale_dispatch_count: {
    type: 'number',
    source:
      'the request logs: requests whose fence was lower than one the downstream had already accepted for the key and which were NOT refused (a stale owner got through; must be 0)',
  },
  mismatched_dispatch_count: {
    type: 'number',
    source:
      'the request logs: requests under a key with other arguments than the key was first used with and which were NOT refused (must be 0)',
  },
  projection_hash_before: {
    type: 'string',
    source: 'the ledger query answered by the original worker just before the fault (or at the end, without one)',
  },
  projection_hash_after: {
    type: 'string',
    source:
      'the ledger query `ledger(upTo)` for the same number of events, answered by a NEW worker that rebuilt the run from the fetched history',
  },
  projection_hash_stable: { type: 'boolean', source: 'projection_hash_before == projection_hash_after' },
  replay_ok: {
    type: 'boolean',
    source: 'Worker.runReplayHistory on the fetched history: no determinism error (it compares commands)',
  },
  final_state: {
    type: 'string',
    source: 'the ledger (replayed): state of the run\u2019s first logical call (SUCCEEDED, FAILED, UNKNOWN, ...)',
  },
  final_states: {
    type: 'string',
    source: 'the ledger (replayed): every logical call\u2019s state in proposal order, comma-separated',
  },
  error_code: {
    type: 'string',
    source: 'the ledger (replayed): the first logical call\u2019s typed error code, or "" when it has none',
  },
  unknown_call_count: { type: 'number', source: 'the ledger (replayed): calls left UNKNOWN' },
  left_standing_count: {
    type: 'number',
    source:
      'the ledger (replayed): the effects the stop left standing for an operator, as its RunCompleted event\u2019s structured leftStanding field lists them (0 for a completed run, or when the run recorded no stop)',
  },
  violation_count: {
    type: 'number',
    source: 'the ledger (replayed): invariant violations the reducer recorded (e.g. a dispatch before its intent)',
  },
  offset_count: {
    type: 'number',
    source: 'the ledger (replayed): compensations that offset a forward effect (CompensationCompleted OFFSET)',
  },
  unsettled_compensation_count: {
    type: 'number',
    source: 'the ledger (replayed): compensations that FAILED or stayed UNKNOWN (an operator must repair)',
  },
  stop_reason: { type: 'string', source: 'the workflow result (and RunCompleted in the ledger); "" if none' },
  cancel_recorded: {
    type: 'boolean',
    source:
      'the ledger (replayed): a CancellationRequested event, i.e. the run recorded the cancel it accepted (verified or Temporal\u2019s own)',
  },
  completed: { type: 'boolean', source: 'the workflow execution closed with a result before the case deadline' },
  faults_fired: {
    type: 'number',
    source:
      'planned faults that observably happened (a process exit by SIGKILL, a SIGSTOP line, a held request, a server restart, ...)',
  },
  probe_outcome: {
    type: 'string',
    source:
      'the probe request\u2019s outcome as the downstream answered it (its error code, "ok" or "replayed"); "" without a probe',
  },
  invariant_violations: {
    type: 'number',
    source:
      'all of the above together: the explorer\u2019s universal invariants (lab/faults/explore-invariants.ts) checked on the rebuilt ledger and the downstreams\u2019 effect and request logs; the number of violations (must be 0)',
  },
} as const satisfies Record<string, MetricSpec>;

export type MetricName = keyof typeof METRICS;
export const METRIC_NAMES = Object.keys(METRICS) as MetricName[];

/** The metrics of one case, every one present. */
export type CaseMetrics = { [K in MetricName]: MetricValue };

export function isMetric(name: string): name is MetricName {
  return Object.prototype.hasOwnProperty.call(METRICS, name);
}

/** The comparison operators of an assertion. */
export const COMPARISONS = ['==', '!=', '>=', '<=', '>', '<'] as const;
export type Comparison = (typeof COMPARISONS)[number];

/** Operators that need an ordered (numeric) metric. */
export const ORDERED_COMPARISONS: readonly Comparison[] = ['>=', '<=', '>', '<'];
