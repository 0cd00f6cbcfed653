/**
 * A run's workflow id begins with its tenant: `<tenant>:run-<time>-<random>`, e.g. `acme:run-mf3k2a-9c1e04`.
 *
 * Why: the Temporal frontend decides before any workflow code runs, and sees only the request (for an update or
 * a query: the workflow id, the update name, an encrypted payload). The tenant in the id is what lets the
 * frontend's authorizer (lab/cluster/server/authorizer.go) keep a starter of acme away from globex's runs without
 * a lookup: it refuses a start whose id is not `<own tenant>:...` and an update, query or read of an id that is not.
 * The id is chosen by the starter, so the rule holds only because every start is checked too. Tenant names that
 * could forge a prefix (`:` inside, or a `ledgerloop-` system prefix) are refused here and get no tenant rights
 * there. docs/operations.md ("Who may call what at the Temporal frontend") says the rest.
 */
import { randomBytes } from 'node:crypto';

/** A tenant name usable as a workflow id prefix: the frontend's own rule. */
export const TENANT_PREFIX_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,99}$/;
export const RUN_ID_SEPARATOR = ':';

/** The tenant cannot head a workflow id (the frontend would give it no rights). */
export class RunIdError extends Error {
  override readonly name = 'RunIdError';
}

export function isPrefixableTenant(tenant: string): boolean {
  return TENANT_PREFIX_PATTERN.test(tenant) && !tenant.toLowerCase().startsWith('ledgerloop-');
}

/** `<tenant>:run-<time base 36>-<6 hex>`: sortable by start time, unique without coordination. */
export function newRunWorkflowId(tenant: string, nowMs: number = Date.now()): string {
  if (!isPrefixableTenant(tenant))
    throw new RunIdError(
      `tenant ${JSON.stringify(tenant.slice(0, 100))} cannot head a workflow id: letters, digits and _ . @ - only, not starting with ledgerloop-`,
    );
  return `${tenant}${RUN_ID_SEPARATOR}run-${nowMs.toString(36)}-${randomBytes(3).toString('hex')}`;
}

/** The tenant a workflow id names (the part before the first `:`), or undefined when it names none. */
export function tenantOfWorkflowId(workflowId: string): string | undefined {
  const at = workflowId.indexOf(RUN_ID_SEPARATOR);
  if (at <= 0 || at === workflowId.length - 1) return undefined;
  const tenant = workflowId.slice(0, at);
  return isPrefixableTenant(tenant) ? tenant : undefined;
}
