/** Models for tests: the scripted model behind a record of who asked it, to prove what was (never) sent to a model. */
import { ApplicationFailure } from '@temporalio/common';
import type { ModelProvider } from '../../src/planner/model';
import { labScriptedModel } from '../../lab/scenarios';

export interface AskedModel {
  readonly model: ModelProvider;
  /** How many turns the model was asked to plan. */
  calls(): number;
  /** The run id of every ask, in order. */
  readonly askedBy: readonly string[];
}

/**
 * The scripted model, noting each run that asks it. `delayMs`: it thinks that long first. `failWith`: it then fails
 * every turn with an `ApplicationFailure` of that type, not retried.
 */
export function askedModel(opts: { readonly failWith?: string; readonly delayMs?: number } = {}): AskedModel {
  const inner = labScriptedModel();
  const askedBy: string[] = [];
  return {
    askedBy,
    calls: () => askedBy.length,
    model: {
      kind: 'scripted',
      async plan(req, call) {
        askedBy.push(req.runId);
        // The scenario, not a wait for a condition: a model slow enough that the test acts while it thinks.
        if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
        if (opts.failWith) throw ApplicationFailure.nonRetryable('the model is unavailable', opts.failWith);
        return inner.plan(req, call);
      },
    },
  };
}
