/**
 * A new run's opening: its token verified and its policy read by its first planning turn, before the model is
 * called (steps/plan.ts `planOpening`), or on its own (identity.ts) when that turn cannot say who the token names.
 */
import { ActivityFailure } from '@temporalio/workflow';
import { DeadlineTooClose } from '../src/domain/activity-presets';
import type { OpenedIdentity } from '../src/domain/activity-contracts';
import { checkedOpening, identityRefusal, verifyRunIdentity, type RunIdentity } from './identity';
import { modelFailureCause, planOpening, type Planned } from './steps/plan';

/**
 * Open a new run with its first planning turn: the planner activity verifies the token and its principal, then
 * calls the model. `first` is the turn to record once the run is created; there is none when the identity was
 * refused, since no model was called.
 *
 * When the activity could not say who the token names, the run verifies it on its own, so every run records its
 * identity: after the model's failure (turn 1 then records that failure), when the deadline leaves no room for a
 * model call (turn 1 then stops at the deadline), and when the planner did not verify the opening (its plan is
 * used only once the token has verified).
 */
export async function openWithFirstPlan(
  run: Parameters<typeof planOpening>[0],
  token: string,
): Promise<{ readonly checked: RunIdentity; readonly first?: Planned }> {
  const { principal } = run.input;
  const verifyAlone = () => verifyRunIdentity(token, principal);
  let opened: OpenedIdentity | undefined;
  let first: Planned;
  try {
    const answer = await planOpening(run, { token, principal });
    opened = answer.opened;
    first = { ok: true, plan: answer.response };
  } catch (err) {
    if (err instanceof DeadlineTooClose) return { checked: await verifyAlone() };
    // A cancellation, or a defect in this code: never read as the model's failure.
    if (!(err instanceof ActivityFailure)) throw err;
    const refused = identityRefusal(err);
    if (refused) return { checked: { ok: false, ...refused } };
    first = { ok: false, cause: modelFailureCause(err) };
  }
  const checked = opened ? checkedOpening(opened, principal) : await verifyAlone();
  return checked.ok ? { checked, first } : { checked };
}
