/**
 * The paths a release's baseline fixtures must cover (docs/versioning.md, "The baseline"): each is one recorded
 * history in test/replay/histories/baseline/. The recorder (scripts/record-histories.ts) refuses to finish a
 * baseline that misses one, and the replay tier checks every one is there and replays.
 */
import type { StopReason } from '../../src/domain/run';

export interface BaselinePath {
  /** The fixture's file name, without `.json`. */
  readonly fixture: string;
  /** How the recorded run stopped. */
  readonly stop: StopReason;
  /** What the history shows. */
  readonly path: string;
}

export const BASELINE_PATHS: readonly BaselinePath[] = [
  {
    fixture: 'opening-failure-check_receipt',
    stop: 'completed',
    path: 'a response lost after commit, a worker killed: one charge',
  },
  { fixture: 'opening-failure-same_key_replay', stop: 'completed', path: 'the same, under a same-key resend' },
  { fixture: 'lost-response-same-key', stop: 'completed', path: 'a lost response resent under the same key' },
  { fixture: 'rejected-malformed', stop: 'completed', path: 'a malformed proposal rejected, never dispatched' },
  { fixture: 'denied-over-limit', stop: 'completed', path: 'a decision the policy denies' },
  { fixture: 'approval-granted', stop: 'completed', path: 'an approval granted' },
  { fixture: 'approval-denied', stop: 'completed', path: 'an approval denied' },
  {
    fixture: 'approval-lapsed-renewed',
    stop: 'completed',
    path: 'an approval lapsed after a possible send, renewed and granted',
  },
  {
    fixture: 'reauthorized-after-lost-response',
    stop: 'completed',
    path: 're-authorization after a possible send, renewal denied',
  },
  {
    fixture: 'operator-resolved',
    stop: 'completed',
    path: 'an UNKNOWN call resolved by a verified operator, checked by lookup',
  },
  {
    fixture: 'cancelled-after-effect',
    stop: 'operator_stopped',
    path: 'a verified cancel; the standing effect offset (operator_stopped)',
  },
  {
    fixture: 'saga-across-continue-as-new',
    stop: 'budget_exhausted',
    path: 'continue-as-new carrying saga registrations',
  },
  { fixture: 'saga-compensated', stop: 'tool_failed', path: 'compensation at a failed effect (tool_failed)' },
  { fixture: 'turn-budget', stop: 'budget_exhausted', path: 'compensation at budget_exhausted' },
  { fixture: 'deadline-after-effect', stop: 'deadline_exceeded', path: 'compensation at deadline_exceeded' },
  { fixture: 'model-failed-after-effect', stop: 'model_failed', path: 'compensation at model_failed' },
  {
    fixture: 'outcome-unknown-at-deadline',
    stop: 'outcome_unknown',
    path: 'an effect left standing at outcome_unknown, named for an operator',
  },
  { fixture: 'parallel-over-budget', stop: 'budget_exhausted', path: 'a parallel turn over the tool-call budget' },
  { fixture: 'repeated-intent', stop: 'completed', path: 'a repeated intent answered, not dispatched again' },
  {
    fixture: 'proven-unsent',
    stop: 'tool_failed',
    path: 'an only attempt refused before sending: FAILED without a lookup',
  },
  {
    fixture: 'identity-refused',
    stop: 'authorization_denied',
    path: 'a run with no token: refused before any model call',
  },
  {
    fixture: 'identity-mismatch',
    stop: 'authorization_denied',
    path: "a token for another tenant: refused by the opening's planning turn",
  },
  {
    fixture: 'opening-model-failed',
    stop: 'model_failed',
    path: 'the first model call failed: the identity verified on its own',
  },
];
