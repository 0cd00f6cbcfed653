/**
 * The policy a run decides from, as the authorizer last returned it (first at the run's opening). The workflow
 * evaluates the pure `evaluate` itself; the dispatch activity signs a decision only while the current policy still
 * has the held digest. A change sends nothing and comes back as `Authorization.Stale`: the run forgets the policy
 * and asks the authorizer once for every call waiting on it.
 */
import type { HeldPolicy } from '../src/domain/authorization';

export class PolicyHolder {
  private policy: HeldPolicy | undefined;
  /** A call of this run is asking the authorizer right now: the others wait for its answer instead of asking too. */
  fetching = false;

  constructor(initial?: HeldPolicy) {
    this.policy = initial;
  }

  get current(): HeldPolicy | undefined {
    return this.policy;
  }

  hold(p: HeldPolicy): void {
    this.policy = p;
  }

  forget(): void {
    this.policy = undefined;
  }
}
