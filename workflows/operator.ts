/** The operator's hand on a run: settle a call that reconciliation left UNKNOWN, recorded with who and why. */
import { setHandler } from '@temporalio/workflow';
import { resolveCallUpdate } from './definitions';
import type { Ledger } from './ledger';

export function handleOperatorResolutions(ledger: Ledger, onChange: () => void): void {
  setHandler(
    resolveCallUpdate,
    (res) => {
      ledger.append({
        type: 'ToolEffectReconciled',
        logicalCallId: res.logicalCallId,
        via: 'operator',
        outcome: res.outcome,
        ...(res.receipt !== undefined ? { receipt: res.receipt } : {}),
        detail: `${res.operator}: ${res.reason}`,
      });
      onChange();
      return { accepted: true as const };
    },
    {
      validator: (res) => {
        if (ledger.projection.calls[res.logicalCallId]?.state !== 'UNKNOWN') {
          throw new Error(`call ${res.logicalCallId} is not UNKNOWN`);
        }
        if (!res.operator || !res.reason) throw new Error('an operator resolution needs who and why');
      },
    },
  );
}
