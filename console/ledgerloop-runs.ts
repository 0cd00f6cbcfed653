/**
 * What the console counts as a Ledgerloop run: any workflow that carries the `LedgerloopTenant` search attribute,
 * whatever its type. An agent run (`agentRun`) and a governed session opened in the team's own workflow
 * (`ledgerloop/ai-sdk`, `ledgerloop/openai-agents`) both publish it, and both answer the same ledger and
 * approval queries and updates. A workflow without it is no run of any tenant (refused, fail closed).
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { SA } from '../src/domain/search-attributes';

/** The visibility query for `tenant`'s Ledgerloop runs that also meet `condition` (a visibility expression). */
export function runsOfTenantQuery(tenant: string, condition: string): string {
  return `LedgerloopTenant = '${tenant}' AND ${condition}`;
}

/** Whether a described workflow is a Ledgerloop run of `tenant` (its tenant search attribute says so). */
export function isRunOfTenant(d: WorkflowExecutionDescription, tenant: string): boolean {
  return d.typedSearchAttributes.get(SA.tenant) === tenant;
}
