/**
 * The mark every bench switch carries: a string the switch's stub module uses in live code, so that a bundle (or a
 * package) holding any switch can be found by searching it (test/unit/bench-switches-out-of-product.test.ts: the
 * shipped bundle and the package hold none, the bench's switch bundles hold theirs).
 *
 * Workflow-safe: no imports; bundled into the bench's switch bundles only.
 */
export const SWITCH_MARK = 'ledgerloop-bench-switch';

/** The ids of the bench's switches (lab/bench/switches/catalogue.ts says what each one takes out or doubles). */
export type SwitchId =
  | 'codec'
  | 'identity'
  | 'authorization'
  | 'quota'
  | 'ledger-events'
  | 'reducer'
  | 'zod'
  | 'hashing'
  | 'search-attributes';

/** The mark of one switch, as its stub module writes it: a literal, so that a bundle holds it as written. */
export type SwitchMark = `${typeof SWITCH_MARK}:${SwitchId}`;
