/**
 * The fault protocol's vocabulary: the named crash points, the fault kinds, and which kinds each point accepts.
 * Pure data, safe to import from workflow code (the workflow hook names its point from here), from the format
 * and from the docs generator.
 *
 * A crash point names a MOMENT in the life of one logical call; a fault kind names WHAT happens there. Points
 * inside a worker process fire in that process (a real SIGKILL or SIGSTOP of itself); points at a downstream are
 * armed on the service (`POST /admin/faults`); the rest are acts of the runner on real processes (SIGKILL of the
 * Temporal server, a new policy file, an approver who does not renew).
 */

/** Every fault kind the runner knows. */
export const FAULT_KINDS = [
  'kill',
  'pause',
  'delay',
  'drop_response',
  'error_5xx',
  'restart_server',
  'publish_policy',
  'refuse_seal',
  'rate_limit',
  'cancel',
  'temporal_cancel',
  'continue_as_new',
  'junk_signal',
  'junk_update',
  'restart_downstream',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Where a crash point is implemented. */
export type PointSite = 'workflow' | 'activity' | 'network' | 'downstream' | 'server' | 'approval' | 'policy' | 'run';

/** A feature a crash point needs in the build (checked against the workflow bundle before anything runs). */
export type PointFeature = 'saga';

export interface CrashPointSpec {
  readonly site: PointSite;
  /** One sentence: the moment, in the essay's terms. */
  readonly moment: string;
  readonly kinds: readonly FaultKind[];
  readonly requires?: PointFeature;
}

/** The named crash points. Names are stable: a protocol written against them keeps working. */
export const CRASH_POINTS = {
  'workflow.before_intent': {
    site: 'workflow',
    moment:
      'the worker is inside the workflow task that records DispatchIntentRecorded; the task has not reached the server, so the intent is not durable yet',
    kinds: ['kill', 'pause', 'delay'],
  },
  'tool.before_send': {
    site: 'activity',
    moment: 'the dispatch attempt is about to send its request; nothing has been sent to the downstream yet',
    kinds: ['kill', 'pause', 'delay'],
  },
  'tool.in_flight': {
    site: 'network',
    moment:
      'the dispatch request has left the worker and is on the wire (held by the runner\u2019s network hold), not yet at the downstream',
    kinds: ['pause', 'delay'],
  },
  'downstream.before_commit': {
    site: 'downstream',
    moment: 'the downstream holds the request with its idempotency record in_progress; no effect is committed',
    kinds: ['kill', 'delay', 'drop_response', 'error_5xx', 'restart_downstream'],
  },
  'downstream.after_commit': {
    site: 'downstream',
    moment: 'the downstream committed the effect; its response has not left yet',
    kinds: ['kill', 'delay', 'drop_response', 'error_5xx', 'restart_downstream'],
  },
  'tool.after_response': {
    site: 'activity',
    moment: 'the worker holds the downstream response; the activity completion has not reached the Temporal server',
    kinds: ['kill', 'pause', 'delay'],
  },
  'compensation.before_send': {
    site: 'activity',
    moment: 'a compensating call (refund, release, cancel) has started; nothing has been sent yet',
    kinds: ['kill', 'pause', 'delay'],
    requires: 'saga',
  },
  'compensation.after_response': {
    site: 'activity',
    moment: 'a compensating call has its downstream response; the completion has not reached the server',
    kinds: ['kill', 'pause', 'delay'],
    requires: 'saga',
  },
  'server.mid_run': {
    site: 'server',
    moment:
      'a dispatch is in flight (the downstream committed and holds its response): the Temporal server is SIGKILLed and restarted on the same database',
    kinds: ['restart_server'],
  },
  'approval.expiry': {
    site: 'approval',
    moment:
      'a human approved the call with a short TTL; the call then waits at dispatch until the approval (and the capability bound to it) has lapsed',
    kinds: ['delay'],
  },
  'policy.before_dispatch': {
    site: 'policy',
    moment:
      'the proposal is recorded and waits for approval; a new policy version is published before the dispatch decision',
    kinds: ['publish_policy'],
  },
  'downstream.seal': {
    site: 'downstream',
    moment:
      'reconciliation asks the downstream to seal a key it holds no effect under (`POST /v1/operations/:key/seal`); the downstream answers not_found with sealed: false and does not seal',
    kinds: ['refuse_seal'],
  },
  'policy.rate_limit': {
    site: 'policy',
    moment:
      'the policy the run starts with (and every version published later) limits an action to `max` dispatches per `ms` per run, principal or tenant: a later dispatch waits for the window, or the wait would pass the deadline',
    kinds: ['rate_limit'],
  },
  'run.cancel': {
    site: 'run',
    moment:
      'the n-th ledger event of type `after` has been recorded (then `ms` more): the runner cancels the run, verified (the requestCancel update with the principal\u2019s token) or with Temporal\u2019s own cancel',
    kinds: ['cancel', 'temporal_cancel'],
  },
  'run.history_budget': {
    site: 'run',
    moment:
      'the run\u2019s history budget (budgets.maxHistoryEvents) is `events`: once its history passes it, the run continues as new at its next turn',
    kinds: ['continue_as_new'],
  },
  'run.message': {
    site: 'run',
    moment:
      'the n-th ledger event of type `after` has been recorded (then `ms` more): the runner sends the run junk signals or junk updates (unknown names, malformed bodies, no token)',
    kinds: ['junk_signal', 'junk_update'],
  },
} as const satisfies Record<string, CrashPointSpec>;

export type CrashPointName = keyof typeof CRASH_POINTS;
export const CRASH_POINT_NAMES = Object.keys(CRASH_POINTS) as CrashPointName[];

/** The points a worker process fires itself (the workflow sink and the dispatch activity hooks). */
export type InProcessPoint =
  | 'workflow.before_intent'
  | 'tool.at_dispatch'
  | 'tool.before_send'
  | 'tool.after_response'
  | 'compensation.before_send'
  | 'compensation.after_response';
export const IN_PROCESS_POINTS: readonly InProcessPoint[] = [
  'workflow.before_intent',
  'tool.at_dispatch',
  'tool.before_send',
  'tool.after_response',
  'compensation.before_send',
  'compensation.after_response',
];

/** What each fault kind does, for the docs and the printed plan. */
export const FAULT_KIND_MEANING: Readonly<Record<FaultKind, string>> = {
  kill: 'SIGKILL of the worker process at the point (in process: it kills itself; at a downstream: the runner kills the worker waiting on the held request); a fresh worker process takes over',
  pause:
    'SIGSTOP of the worker process at the point (at tool.in_flight: of the worker whose request is held on the wire); a fresh worker takes over; SIGCONT once the attempt was retried and closed elsewhere (or after `ms`), after delivering a held request late',
  delay: 'the process (or the downstream) waits `ms` at the point, then goes on',
  drop_response: 'the downstream closes the connection without an answer (after its commit, if at after_commit)',
  error_5xx: 'the downstream answers 503 before commit, or 502 after commit (the effect stays committed)',
  restart_server: 'SIGKILL of the Temporal dev server process group, then a restart on the same SQLite database',
  publish_policy: 'the runner writes a new policy version to the workers\u2019 LEDGERLOOP_POLICY_FILE',
  refuse_seal:
    'the downstream answers a seal of a missing key not_found with sealed: false and leaves the key unsealed (`times` seal requests from the `occurrence`-th)',
  rate_limit:
    'the case\u2019s policy (and every version published later) gets a rate limit on `action` (default wallet.debit): `max` dispatches per `ms` per `per` (run, principal or tenant)',
  cancel:
    'the runner sends the verified requestCancel update with the run principal\u2019s token; the run stops operator_stopped',
  temporal_cancel: 'the runner cancels the workflow with Temporal\u2019s own cancel (no identity)',
  continue_as_new:
    'the run starts with budgets.maxHistoryEvents = `events`, so it continues as new once its history passes it',
  junk_signal: 'the runner signals the run with unknown signal names and malformed payloads',
  junk_update:
    'the runner sends malformed updates (decideApproval, resolveCall, requestCancel with bodies that must be refused) and an unknown update name',
  restart_downstream:
    'the downstream holds the request at the point; the runner SIGKILLs the downstream process and starts it again on the same port and database',
};

/** A few words per fault kind, for the printed plan. */
export const FAULT_KIND_SHORT: Readonly<Record<FaultKind, string>> = {
  kill: 'SIGKILL the worker there; a fresh worker takes over',
  pause: 'SIGSTOP the worker there; SIGCONT after the retry closed elsewhere',
  delay: 'wait there, then go on',
  drop_response: 'the downstream drops the connection',
  error_5xx: 'the downstream answers 5xx',
  restart_server: 'SIGKILL the Temporal server, restart it on the same database',
  publish_policy: 'publish a new policy version',
  refuse_seal: 'the downstream will not seal the key',
  rate_limit: 'a rate limit in the policy',
  cancel: 'cancel the run (verified requestCancel)',
  temporal_cancel: 'cancel the run (Temporal cancel)',
  continue_as_new: 'a history budget the run continues as new at',
  junk_signal: 'send junk signals',
  junk_update: 'send junk updates',
  restart_downstream: 'SIGKILL the downstream there, restart it on the same database',
};

/** Whether `name` is a known crash point. */
export function isCrashPoint(name: string): name is CrashPointName {
  return Object.prototype.hasOwnProperty.call(CRASH_POINTS, name);
}
