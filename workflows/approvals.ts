/**
 * Human approvals inside the workflow: a pending request per call, decided by an Update whose validator
 * refuses any decision that does not name the exact call (logical call id, arguments hash, policy version).
 */
import { condition, setHandler } from '@temporalio/workflow';
import type { ApprovalGrant } from '../src/policy/authorization';
import { decideApprovalUpdate, pendingApprovalsQuery, type PendingApproval } from './definitions';
import type { Ledger } from './ledger';

type Outcome = { readonly kind: 'granted'; readonly grant: ApprovalGrant } | { readonly kind: 'denied'; readonly approver: string; readonly reason: string };

export class Approvals {
  private readonly pending = new Map<string, PendingApproval & { readonly ttlMs: number }>();
  private readonly outcomes = new Map<string, Outcome>();

  constructor(
    private readonly ledger: Ledger,
    private readonly onChange: () => void,
  ) {
    setHandler(pendingApprovalsQuery, () => [...this.pending.values()].map(({ ttlMs: _ttl, ...p }) => p));
    setHandler(
      decideApprovalUpdate,
      (d) => {
        const p = this.pending.get(d.logicalCallId)!;
        this.pending.delete(d.logicalCallId);
        if (d.decision === 'deny') {
          const reason = d.reason ?? 'denied';
          this.ledger.append({ type: 'ApprovalDenied', logicalCallId: d.logicalCallId, approver: d.approver, reason });
          this.outcomes.set(d.logicalCallId, { kind: 'denied', approver: d.approver, reason });
          this.onChange();
          return { accepted: true as const };
        }
        const now = Date.now();
        const expiresAt = new Date(now + (d.ttlMs ?? p.ttlMs)).toISOString();
        const grant: ApprovalGrant = {
          logicalCallId: d.logicalCallId,
          argumentsHash: d.argumentsHash,
          policyVersion: d.policyVersion,
          approver: d.approver,
          grantedAt: new Date(now).toISOString(),
          expiresAt,
          ...(d.reason ? { note: d.reason } : {}),
        };
        this.ledger.append({ type: 'ApprovalGranted', logicalCallId: d.logicalCallId, argumentsHash: d.argumentsHash, policyVersion: d.policyVersion, approver: d.approver, expiresAt });
        this.outcomes.set(d.logicalCallId, { kind: 'granted', grant });
        this.onChange();
        return { accepted: true as const, expiresAt };
      },
      {
        validator: (d) => {
          const p = this.pending.get(d.logicalCallId);
          if (!p) throw new Error(`call ${d.logicalCallId} is not waiting for approval`);
          if (d.argumentsHash !== p.argumentsHash) throw new Error('the decision names other arguments than the pending call');
          if (d.policyVersion !== p.policyVersion) throw new Error(`the call waits under policy ${p.policyVersion}, not ${d.policyVersion}`);
          if (!d.approver) throw new Error('an approval decision needs the approver identity');
          if (d.ttlMs !== undefined && !(d.ttlMs > 0)) throw new Error('ttlMs must be positive');
        },
      },
    );
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Ask for a decision and wait for it, at most `timeoutMs`. Returns undefined on timeout. */
  async request(p: PendingApproval, ttlMs: number, timeoutMs: number): Promise<Outcome | undefined> {
    this.outcomes.delete(p.logicalCallId);
    this.pending.set(p.logicalCallId, { ...p, ttlMs });
    this.onChange();
    const decided = await condition(() => this.outcomes.has(p.logicalCallId), Math.max(0, timeoutMs));
    if (!decided) {
      this.pending.delete(p.logicalCallId);
      this.onChange();
      return undefined;
    }
    return this.outcomes.get(p.logicalCallId);
  }
}
