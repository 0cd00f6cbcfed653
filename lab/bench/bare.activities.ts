/**
 * Activities of the bare baseline (lab/bench/workflows/bare.workflow.ts). `barePlan` serves the same scripted turns
 * as the governed planner (`n-debits`); `bareDebit` POSTs the same debit to the wallet, under the key the
 * workflow chose and with a capability signed for exactly that call (the wallet refuses unsigned requests), so
 * the downstream work is identical to a governed dispatch. Nothing else: no policy, no ledger, no validation.
 *
 * `clientRetries: 'stacked'` models the naive stack: an SDK-style client that retries a failed request itself
 * (3 attempts, 100 ms doubling, like the AWS SDK default) inside an activity that Temporal also retries.
 */
import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { hashCanonical } from '../../src/domain/canonical';
import { DownstreamClient, type SendOutcome } from '../../src/downstream/client';
import { scenarios } from '../scenarios';
import { signCapability } from '../../src/capability/capability';
import type { CapabilitySigningKey } from '../../src/capability/capability-keys';

export interface BarePlanRequest {
  readonly turn: number;
  readonly account: string;
  readonly turns: number;
  /** The bytes ablation: a proposal carries this many bytes more (see BareLoopInput.evidenceBytesPerCall). */
  readonly padBytes?: number;
}

export type BarePlanResponse =
  | {
      readonly kind: 'proposals';
      readonly proposals: readonly { providerCallId: string; name: string; argumentsJson: string }[];
      readonly pad?: string;
    }
  | { readonly kind: 'final'; readonly text: string };

export interface BareDebitRequest {
  readonly key: string;
  readonly body: {
    readonly tenant: string;
    readonly account: string;
    readonly amount: { minor: number; currency: string };
  };
  readonly principalId: string;
  readonly clientRetries: 'single' | 'stacked';
  /** The bytes ablation: carried in, never sent downstream; and how many bytes the result carries back. */
  readonly pad?: string;
  readonly padResultBytes?: number;
}

export interface BareCallResult {
  readonly ok: boolean;
  readonly key: string;
  readonly receipt?: string;
  /** HTTP requests this activity attempt sent (the client's own retries included). */
  readonly requests?: number;
  readonly pad?: string;
}

/** Attempts of the SDK-style client in the stacked setup, and its backoff. */
export const STACKED_CLIENT_ATTEMPTS = 3;
const STACKED_BACKOFF_MS = 100;

export interface BareDeps {
  readonly walletUrl: string;
  readonly capabilityKey: CapabilitySigningKey;
}

export function createBareActivities(deps: BareDeps) {
  const wallet = new DownstreamClient({ baseUrl: deps.walletUrl, timeoutMs: 5_000 });

  async function barePlan(req: BarePlanRequest): Promise<BarePlanResponse> {
    const script = scenarios['n-debits']!({ turns: req.turns, account: req.account });
    const turn = script[req.turn - 1];
    if (turn === undefined || !('proposals' in turn)) return { kind: 'final', text: 'done' };
    return {
      kind: 'proposals',
      proposals: turn.proposals.map((p) => ({
        providerCallId: `call_${randomUUID().replace(/-/g, '').slice(0, 24)}`,
        name: p.name,
        argumentsJson: JSON.stringify(p.arguments),
      })),
      ...(req.padBytes ? { pad: 'x'.repeat(req.padBytes) } : {}),
    };
  }

  async function bareDebit(req: BareDebitRequest): Promise<BareCallResult> {
    const ctx = Context.current();
    const argumentsHash = hashCanonical(req.body);
    // One capability per request: the wallet accepts each token once (a client retry signs a fresh one).
    const capabilityFor = (): string =>
      signCapability(
        {
          operationKey: req.key,
          keyMode: 'exact',
          argumentsHash,
          tenant: req.body.tenant,
          principalId: req.principalId,
          scope: 'wallet.charge',
          action: 'wallet.debit',
          resource: `${req.body.tenant}/account/${req.body.account}`,
          policyVersion: 'bare',
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        },
        deps.capabilityKey,
        { audience: 'wallet', nowMs: Date.now() },
      ).token;
    const attempts = req.clientRetries === 'stacked' ? STACKED_CLIENT_ATTEMPTS : 1;
    let sent: SendOutcome | undefined;
    let requests = 0;
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, STACKED_BACKOFF_MS * 2 ** (i - 1)));
      requests += 1;
      sent = await wallet.send('/v1/debits', req.body, {
        key: req.key,
        argumentsHash,
        // The bare baseline records no intent: the activity's first scheduling stands in for it.
        intentAt: new Date(ctx.info.scheduledTimestampMs).toISOString(),
        capability: capabilityFor(),
        signal: ctx.cancellationSignal,
      });
      if (sent.kind === 'ok' || sent.kind === 'rejected') break;
    }
    switch (sent?.kind) {
      case 'ok': {
        const receipt = (sent.body as { receipt?: unknown } | undefined)?.receipt;
        return {
          ok: true,
          key: req.key,
          requests,
          ...(typeof receipt === 'string' ? { receipt } : {}),
          ...(req.padResultBytes ? { pad: 'x'.repeat(req.padResultBytes) } : {}),
        };
      }
      case 'rejected':
        throw ApplicationFailure.nonRetryable(`wallet refused: ${sent.code}`, 'Bare.Rejected');
      default:
        throw ApplicationFailure.retryable(`wallet call failed: ${sent?.kind ?? 'not sent'}`, 'Bare.Failed');
    }
  }

  /** The local-activity ablation: a no-op decision, the size of a small authorization result. */
  async function bareCheck(req: { key: string }): Promise<{ allowed: true; key: string }> {
    return { allowed: true, key: req.key };
  }

  return { barePlan, bareDebit, bareCheck };
}

export type BareActivities = ReturnType<typeof createBareActivities>;
