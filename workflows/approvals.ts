/**
 * Human approvals inside the workflow: a pending request per call, decided by an Update whose validator
 * refuses any decision that does not name the exact call (logical call id, arguments hash, policy version), or
 * that is malformed: an unknown decision value, a TTL that is not a positive safe integer within the policy's
 * cap, a missing or ill-shaped token. Nothing a client sends can fail a workflow task.
 *
 * The approver is verified: the handler has the `verifyIdentity` activity check the token (an `approve` token for
 * this run and call), then refuses an approver of another tenant, the run's own identity (its issuer and subject,
 * or its principal in normal form), or one without a role the held policy lists for the call's action
 * (`approvers`). The ledger records the verified principal, subject, issuer and token digest.
 */
import { ApplicationFailure, condition, setHandler, TemporalFailure } from '@temporalio/workflow';
import { refuseUndecodable } from '../src/domain/undecodable';
import { Failure } from '../src/domain/failures';
import { principalsDiffer } from '../src/domain/principal-id';
import { actorRecord, isTokenShaped, type ActorRecord, type VerifiedIdentity } from '../src/domain/verified-identity';
import type { ApprovalGrant } from '../src/domain/authorization';
import type { Policy } from '../src/domain/policy-format';
import { mayApprove } from '../src/policy/policy-rules';
import {
  decideApprovalUpdate,
  pendingApprovalsQuery,
  type ApprovalDecisionInput,
  type PendingApproval,
} from './definitions';
import { forbidden, verifyActor } from './identity';
import type { Ledger } from './ledger';

const MAX_REASON = 2_000;

type Outcome =
  | { readonly kind: 'granted'; readonly grant: ApprovalGrant }
  | { readonly kind: 'denied'; readonly approver: string; readonly reason: string };

interface Waiting extends PendingApproval {
  readonly ttlMs: number;
  /** The policy the approval was asked under: who may approve, and the TTL cap. */
  readonly policy: Policy;
  /** The action of the call (policy `approvers[].action`). */
  readonly action: string;
}

export class Approvals {
  private readonly pending = new Map<string, Waiting>();
  private readonly outcomes = new Map<string, Outcome>();
  private readonly deciding = new Set<string>();

  constructor(
    private readonly ledger: Ledger,
    private readonly onChange: () => void,
    private readonly run: {
      readonly runId: string;
      readonly principalId: string;
      readonly tenant: string;
      /** The identity the run was started under (verified at its opening, carried across continue-as-new). */
      startedBy(): { readonly issuer: string; readonly subject: string } | undefined;
    },
  ) {}

  /** The pending requests as the `pendingApprovals` query shows them. */
  listPending(): PendingApproval[] {
    return [...this.pending.values()].map(({ ttlMs: _ttl, policy: _p, action: _a, ...p }) => p);
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Ask for a decision and wait for it, at most `timeoutMs`. Returns undefined on timeout, after withdrawing the
   * request; a wait interrupted otherwise (a cancellation) leaves the request for the call runner to withdraw.
   */
  async request(
    p: PendingApproval,
    ttlMs: number,
    timeoutMs: number,
    held: { readonly policy: Policy; readonly action: string },
  ): Promise<Outcome | undefined> {
    const id = p.logicalCallId;
    this.outcomes.delete(id);
    this.pending.set(id, { ...p, ttlMs, policy: held.policy, action: held.action });
    this.onChange();
    const decided = await condition(() => this.outcomes.has(id), Math.max(0, timeoutMs));
    if (!decided) {
      this.withdraw(id, 'no decision before the run deadline');
      return undefined;
    }
    return this.outcomes.get(id);
  }

  /** Withdraw the call's pending request, if it has one: no decision can be taken on it from now on. */
  withdraw(logicalCallId: string, reason: string): void {
    if (!this.pending.delete(logicalCallId)) return;
    this.ledger.append({ type: 'ApprovalWithdrawn', logicalCallId, reason: reason.slice(0, 500) });
    this.onChange();
  }

  /** The validator (and the handler's first step): a well-formed decision on a pending call. Throws typed failures. */
  check(d: unknown): {
    readonly input: ApprovalDecisionInput & { readonly token: string };
    readonly waiting: Waiting;
  } {
    refuseUndecodable(d, 'the approval decision');
    if (typeof d !== 'object' || d === null) throw invalid('a decision must be an object');
    const r = d as Record<string, unknown>;
    const id = r['logicalCallId'];
    const waiting = typeof id === 'string' ? this.pending.get(id) : undefined;
    if (!waiting) throw invalid(`call ${String(id).slice(0, 100)} is not waiting for approval`);
    if (r['argumentsHash'] !== waiting.argumentsHash)
      throw invalid('the decision names other arguments than the pending call');
    if (r['policyVersion'] !== waiting.policyVersion)
      throw invalid(
        `the call waits under policy ${waiting.policyVersion}, not ${String(r['policyVersion']).slice(0, 100)}`,
      );
    if (r['decision'] !== 'approve' && r['decision'] !== 'deny') throw invalid("decision must be 'approve' or 'deny'");
    const ttl = r['ttlMs'];
    if (ttl !== undefined) {
      const cap = ttlCap(waiting);
      if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl) || ttl <= 0)
        throw invalid('ttlMs must be a positive whole number of milliseconds');
      if (ttl > cap) throw invalid(`ttlMs ${ttl} exceeds the policy's cap of ${cap} ms (maxApprovalTtlMs)`);
      if (r['decision'] === 'deny') throw invalid('a denial takes no ttlMs');
    }
    const reason = r['reason'];
    if (reason !== undefined && (typeof reason !== 'string' || reason.trim() === '' || reason.length > MAX_REASON)) {
      throw invalid(`reason must be a non-empty string of at most ${MAX_REASON} characters`);
    }
    if (!isTokenShaped(r['token']))
      throw ApplicationFailure.create({
        type: Failure.IdentityInvalid,
        nonRetryable: true,
        message: 'a decision needs the approver’s identity token (a compact JWS)',
      });
    return { input: d as ApprovalDecisionInput & { token: string }, waiting };
  }

  async decideVerified(d: ApprovalDecisionInput): Promise<{ accepted: true; expiresAt?: string; approver: string }> {
    const { input, waiting } = this.check(d); // the same check as the validator, so the handler never relies on it alone
    const id = input.logicalCallId;
    if (this.deciding.has(id)) throw refusedBusy(id);
    this.deciding.add(id);
    try {
      const verified = await verifyActor(input.token, `approver of ${id}`, {
        purpose: 'approve',
        runId: this.run.runId,
        callId: id,
      });
      // The call may have been decided or timed out while the token was checked.
      if (this.pending.get(id) !== waiting) throw invalid(`call ${id} is no longer waiting for approval`);
      if (verified.tenant !== this.run.tenant)
        throw forbidden(`${verified.principalId} belongs to tenant ${verified.tenant}, not ${this.run.tenant}`);
      const own = this.ownIdentity(verified);
      if (own !== undefined) throw forbidden(own);
      if (!mayApprove(waiting.policy, waiting.action, verified.roles)) {
        throw forbidden(
          `${verified.principalId} (roles: ${verified.roles.join(', ') || 'none'}) may not approve ${waiting.action} under policy ${waiting.policy.version}`,
        );
      }
      return {
        ...this.record(input, waiting, verified.principalId, actorRecord(verified)),
        approver: verified.principalId,
      };
    } finally {
      this.deciding.delete(id);
    }
  }

  /**
   * Why `v` may be the run's own identity, or undefined: the same issuer and subject as the run verified at its
   * start, or a principal that is not certainly another (src/domain/principal-id.ts). A run that does not know the
   * identity it was started with cannot tell them apart: it refuses (fail closed).
   */
  private ownIdentity(v: VerifiedIdentity): string | undefined {
    const run = this.run.startedBy();
    if (run === undefined)
      return `this run does not know the identity it was started with, so ${v.principalId} cannot be told apart from it`;
    const same =
      (run.issuer === v.issuer && run.subject === v.subject) || !principalsDiffer(v.principalId, this.run.principalId);
    return same ? `${v.principalId} may not approve or deny its own call` : undefined;
  }

  private record(
    d: ApprovalDecisionInput,
    p: Waiting,
    approver: string,
    actor: ActorRecord,
  ): { accepted: true; expiresAt?: string } {
    this.pending.delete(d.logicalCallId);
    const who = { actor };
    if (d.decision === 'deny') {
      const reason = d.reason ?? 'denied';
      this.ledger.append({ type: 'ApprovalDenied', logicalCallId: d.logicalCallId, approver, reason, ...who });
      this.outcomes.set(d.logicalCallId, { kind: 'denied', approver, reason });
      this.onChange();
      return { accepted: true as const };
    }
    const now = Date.now();
    const ttl = Math.min(d.ttlMs ?? p.ttlMs, ttlCap(p));
    const expiresAt = new Date(now + ttl).toISOString();
    const grant: ApprovalGrant = {
      logicalCallId: d.logicalCallId,
      argumentsHash: d.argumentsHash,
      policyVersion: d.policyVersion,
      approver,
      grantedAt: new Date(now).toISOString(),
      expiresAt,
      ...(d.reason ? { note: d.reason } : {}),
    };
    this.ledger.append({
      type: 'ApprovalGranted',
      logicalCallId: d.logicalCallId,
      argumentsHash: d.argumentsHash,
      policyVersion: d.policyVersion,
      approver,
      expiresAt,
      ...who,
      ...(d.reason ? { reason: d.reason } : {}),
    });
    this.outcomes.set(d.logicalCallId, { kind: 'granted', grant });
    this.onChange();
    return { accepted: true as const, expiresAt };
  }
}

function ttlCap(p: Waiting): number {
  return p.policy.maxApprovalTtlMs;
}

function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: Failure.ApprovalInvalid, nonRetryable: true, message });
}

function refusedBusy(id: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: Failure.ApprovalInvalid,
    nonRetryable: true,
    message: `another decision on call ${id} is being checked; try again`,
  });
}

/** The `pendingApprovals` query and the `decideApproval` update, over the run's approvals. */
export function handleApprovalDecisions(approvals: Approvals): void {
  setHandler(pendingApprovalsQuery, () => approvals.listPending());
  setHandler(
    decideApprovalUpdate,
    async (d) => {
      try {
        return await approvals.decideVerified(d);
      } catch (err) {
        // Only a TemporalFailure fails just the update; any other error would fail the workflow task.
        if (err instanceof TemporalFailure) throw err;
        throw invalid(`the decision could not be checked: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    { validator: (d) => void approvals.check(d) },
  );
}
