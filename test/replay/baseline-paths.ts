/**
 * The paths a release's baseline fixtures must cover (docs/versioning.md, "The baseline"): each is one recorded
 * history in test/replay/histories/baseline/. The recorder (scripts/record-histories.ts) refuses to finish a
 * baseline that misses one, and the replay tier checks every one is there and replays.
 */
export interface BaselinePath {
  /** The fixture's file name, without `.json`. */
  readonly fixture: string;
  /** What the history shows. */
  readonly path: string;
}

export const BASELINE_PATHS: readonly BaselinePath[] = [
  { fixture: 'opening-failure-check_receipt', path: 'a response lost after commit, a worker killed: one charge' },
  { fixture: 'opening-failure-same_key_replay', path: 'the same, under a same-key resend' },
  { fixture: 'lost-response-same-key', path: 'a lost response resent under the same key' },
  { fixture: 'rejected-malformed', path: 'a malformed proposal rejected, never dispatched' },
  { fixture: 'denied-over-limit', path: 'a decision the policy denies' },
  { fixture: 'approval-granted', path: 'an approval granted' },
  { fixture: 'approval-denied', path: 'an approval denied' },
  { fixture: 'approval-lapsed-renewed', path: 'an approval lapsed after a possible send, renewed and granted' },
  { fixture: 'reauthorized-after-lost-response', path: 're-authorization after a possible send, renewal denied' },
  { fixture: 'operator-resolved', path: 'an UNKNOWN call resolved by a verified operator, checked by lookup' },
  { fixture: 'cancelled-after-effect', path: 'a verified cancel; the standing effect offset (operator_stopped)' },
  { fixture: 'saga-across-continue-as-new', path: 'continue-as-new carrying saga registrations' },
  { fixture: 'saga-compensated', path: 'compensation at a failed effect (tool_failed)' },
  { fixture: 'turn-budget', path: 'compensation at budget_exhausted' },
  { fixture: 'deadline-after-effect', path: 'compensation at deadline_exceeded' },
  { fixture: 'model-failed-after-effect', path: 'compensation at model_failed' },
  { fixture: 'outcome-unknown-at-deadline', path: 'an effect left standing at outcome_unknown, named for an operator' },
  { fixture: 'parallel-over-budget', path: 'a parallel turn over the tool-call budget' },
  { fixture: 'repeated-intent', path: 'a repeated intent answered, not dispatched again' },
  { fixture: 'proven-unsent', path: 'an only attempt refused before sending: FAILED without a lookup' },
  { fixture: 'identity-refused', path: 'a run with no token: refused before any model call' },
  { fixture: 'identity-mismatch', path: "a token for another tenant: refused by the opening's planning turn" },
  { fixture: 'opening-model-failed', path: 'the first model call failed: the identity verified on its own' },
];
