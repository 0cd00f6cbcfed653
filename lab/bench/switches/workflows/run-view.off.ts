/**
 * Bench switch `search-attributes`, its run-view half (off, in the workflow bundle): stands in for
 * workflows/run-view.ts. The run publishes nothing: no search-attribute upsert, no current details. The run's
 * result is the real one. With it the cell strips every activity and timer summary (workflows/summaries-off.ts)
 * and starts its runs without search attributes, static summary or details.
 *
 * Workflow-safe: pure.
 */
import type { Budgets } from '../../../../src/domain/run';
import type { Ledger } from '../../../../workflows/ledger';
import type { SwitchMark } from '../marks';

export { runResult } from '../../../../workflows/run-view';

const MARK: SwitchMark = 'ledgerloop-bench-switch:search-attributes';

export class RunView {
  /** Which switch this view is (the stub publishes nothing). */
  readonly benchSwitch: string;

  constructor(ledger: Ledger, _budgets: Budgets) {
    if (ledger === undefined) throw new Error(`${MARK}: a run view needs its ledger`);
    this.benchSwitch = MARK;
  }

  identify(_values: { readonly principal: string; readonly tenant: string; readonly strategy: string }): void {}

  publish(): void {}
}
