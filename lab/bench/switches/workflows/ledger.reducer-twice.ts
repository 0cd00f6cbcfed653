/**
 * Bench switch `reducer` (done twice, in the workflow bundle): stands in for workflows/ledger.ts with the real
 * ledger, which also applies every event to a second projection by the same reducer. The run decides from its
 * projection, so the reducer cannot be taken out without taking out the decisions: it is priced by doubling it.
 * The cell's extra cost is what applying the events once costs (CPU, and the memory of one more projection).
 *
 * Workflow-safe: pure; the same reducer, applied twice.
 */
import type { LedgerEvent, LedgerEventBody } from '../../../../src/domain/ledger-events';
import {
  applyOwned,
  emptyProjection,
  ownedProjection,
  type OwnedProjection,
  type Projection,
} from '../../../../src/domain/reducer';
import { Ledger as RealLedger } from '../../../../workflows/ledger';
import type { SwitchMark } from '../marks';

export type { LedgerSnapshot } from '../../../../workflows/ledger';

const MARK: SwitchMark = 'ledgerloop-bench-switch:reducer';

export class Ledger extends RealLedger {
  private readonly shadow: OwnedProjection;

  constructor(carried?: { readonly projection: Projection; readonly eventCount: number }) {
    super(carried);
    this.shadow = ownedProjection(carried?.projection ?? emptyProjection());
  }

  override append(body: LedgerEventBody): LedgerEvent {
    const event = super.append(body);
    applyOwned(this.shadow, event);
    if (this.shadow.status !== this.projection.status)
      throw new Error(`${MARK}: the second projection disagrees with the first`);
    return event;
  }
}
