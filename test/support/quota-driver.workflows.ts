/**
 * Test-only workflow bundle: every Ledgerloop workflow plus `quotaDriver`, a stand-in for one agent run that asks
 * the quota store for one call through the same helper the agent run uses (workflows/quota-client.ts).
 */
import { workflowInfo } from '@temporalio/workflow';
import {
  QuotaUnavailable,
  reserveAcrossRuns,
  type AcrossRunsDecision,
  type AcrossRunsRequest,
} from '../../workflows/quota-client';

export * from '../../workflows/index';

export type DriverOutcome = AcrossRunsDecision | { readonly unavailable: string };

/** One "run": its workflow id is the run id of the reservation. */
export async function quotaDriver(req: Omit<AcrossRunsRequest, 'runId' | 'clock'>): Promise<DriverOutcome> {
  try {
    return await reserveAcrossRuns({ ...req, runId: workflowInfo().workflowId });
  } catch (err) {
    if (err instanceof QuotaUnavailable) return { unavailable: err.message };
    throw err;
  }
}
