/**
 * What a signed-in person may see and which actions the console offers them, read from the same policy the workers
 * hold (LEDGERLOOP_POLICY_FILE, or the built-in default). This only shapes the page: every action is decided again
 * by the run (or the console action workflow) under the verified token, and its refusal is what the person sees.
 *
 * - Every item is of the person's own tenant (the visibility query names it; a run page of another tenant is
 *   refused).
 * - A viewer role (default `viewer`) sees every item of the tenant and is offered no action.
 * - An approver (a role the policy lists in `approvers`) sees pending approvals and is offered approve and deny.
 * - An operator (a role in `operators`) sees UNKNOWN calls and abandoned runs, and is offered resolve, look up and
 *   settle.
 * - Everyone sees the items of their own runs; cancel is offered to the run's principal and to `cancellers`.
 */
import type { VerifiedIdentity } from '../src/domain/verified-identity';
import type { Policy } from '../src/domain/policy-format';
import type { PolicyStore } from '../src/stores/policy-store';

export type ItemKind = 'approval' | 'unknown' | 'abandoned';

export interface Abilities {
  readonly approve: boolean;
  readonly operate: boolean;
  readonly cancel: boolean;
  readonly viewAll: boolean;
}

const hasAny = (roles: readonly string[], allowed: readonly string[]): boolean =>
  roles.some((r) => allowed.includes(r));

/** The policy as the console reads it now, or undefined when it cannot be read (then nothing is offered). */
export function readPolicy(store: PolicyStore): Policy | undefined {
  try {
    return store.current();
  } catch {
    return undefined;
  }
}

export function abilitiesOf(
  person: Pick<VerifiedIdentity, 'roles'>,
  policy: Policy | undefined,
  viewerRoles: readonly string[],
): Abilities {
  const roles = person.roles;
  return {
    approve: policy !== undefined && policy.approvers.some((r) => hasAny(roles, r.roles)),
    operate: policy !== undefined && policy.operators.some((r) => hasAny(roles, r.roles)),
    cancel: policy !== undefined && hasAny(roles, policy.cancellers),
    viewAll: hasAny(roles, viewerRoles),
  };
}

/** Whether the inbox lists an item of `kind` on a run of `principal` to this person. */
export function mayList(
  kind: ItemKind,
  principal: string,
  person: Pick<VerifiedIdentity, 'principalId'>,
  a: Abilities,
): boolean {
  if (a.viewAll || principal === person.principalId) return true;
  return kind === 'approval' ? a.approve : a.operate;
}

/** The actions the console offers on an item of `kind` (the run decides them again). */
export function offeredActions(
  kind: ItemKind,
  a: Abilities,
): readonly ('approve' | 'deny' | 'resolve' | 'lookup' | 'settle')[] {
  if (kind === 'approval') return a.approve ? ['approve', 'deny'] : [];
  if (kind === 'unknown') return a.operate ? ['resolve', 'lookup'] : [];
  return a.operate ? ['settle', 'lookup'] : [];
}

/** The approval TTLs offered: a few steps up to the policy's cap, plus the policy's default. */
export function ttlChoicesMs(policy: Policy | undefined): number[] {
  if (!policy) return [];
  const steps = [5, 10, 30, 60, 240, 1440].map((m) => m * 60_000);
  const set = new Set([
    ...steps.filter((s) => s <= policy.maxApprovalTtlMs),
    Math.min(policy.approvalTtlMs, policy.maxApprovalTtlMs),
  ]);
  return [...set].sort((x, y) => x - y);
}
