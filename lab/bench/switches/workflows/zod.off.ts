/**
 * Bench switch `zod` (off, in the workflow bundle): stands in for host/worker/workflow-zod.ts, what `zod` is inside
 * the bundle. zod is not bundled at all, and every schema built from this `z` accepts anything: a tool's arguments
 * and results are taken as the model and the downstream wrote them (JSON-parsed, size-checked, canonicalized, but
 * never validated). The bundle shrinks by zod's size; the tool declarations still load (their schemas are one
 * object that accepts anything). The worker's own zod (the signer re-deriving a call) is not touched.
 *
 * Workflow-safe: pure.
 */
import type { z as Zod } from 'zod';
import type { SwitchMark } from '../marks';

const MARK: SwitchMark = 'ledgerloop-bench-switch:zod';

/** A schema that accepts anything, whatever it is built from: every builder method returns it again. */
function acceptAnything(): unknown {
  const schema: unknown = new Proxy(function benchSchema() {}, {
    get(_target, prop) {
      if (prop === 'safeParse') return (value: unknown) => ({ success: true, data: value });
      if (prop === 'parse') return (value: unknown) => value;
      if (prop === 'benchSwitch') return MARK;
      // Not a promise, not a primitive: the schema is never awaited or printed as a value.
      if (prop === 'then' || typeof prop === 'symbol') return undefined;
      return () => schema;
    },
    apply: () => schema,
  });
  return schema;
}

export const z = acceptAnything() as typeof Zod;
