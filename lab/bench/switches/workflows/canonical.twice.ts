/**
 * Bench switch `hashing` (done twice, both in the workflow bundle and in the worker process): stands in for
 * src/domain/canonical.ts and computes every canonical form and every SHA-256 twice, the real function each time.
 * Nothing can be hashed less without changing what the wallet checks (it recomputes the arguments hash of every
 * body), so the mechanism is priced by doubling it: the cell's extra cost is what hashing costs once.
 *
 * Workflow-safe: pure; the same functions, called twice.
 */
import * as real from '../../../../src/domain/canonical';
import type { SwitchMark } from '../marks';

export { CanonicalizationError, type Json } from '../../../../src/domain/canonical';

const MARK: SwitchMark = 'ledgerloop-bench-switch:hashing';

function twice<T>(once: () => T): T {
  const first = once();
  const again = once();
  if (again !== first) throw new Error(`${MARK}: two computations of one hash differ`);
  return again;
}

export function canonicalJson(value: unknown): string {
  return twice(() => real.canonicalJson(value));
}

export function sha256Hex(text: string): string {
  return twice(() => real.sha256Hex(text));
}

export function hashCanonical(value: unknown): string {
  return twice(() => real.hashCanonical(value));
}
