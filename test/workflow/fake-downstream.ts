/**
 * The fast workflow tier's downstream: stub `dispatchTool` and `reconcileCall` activities over an in-memory
 * idempotency record, scripted attempt by attempt. Everything else a run uses (the scripted model, the authorizer,
 * identity) is the real activity code, on the time-skipping test server: no HTTP, no process.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type {
  DispatchRequest,
  DispatchResponse,
  ReconcileRequest,
  ReconcileResponse,
} from '../../src/domain/activity-contracts';
import { Failure } from '../../src/domain/failures';

/**
 * What one dispatch attempt does, in order (after the script: `ok`):
 * - `ok`: commit (or replay the committed effect under the same key) and answer;
 * - `lose`: commit, then lose the response (`Dispatch.ResponseLost`, retryable: Temporal sends again);
 * - `unavailable`: the downstream cannot be reached, nothing commits (`Dispatch.Unavailable`, retryable);
 * - `stale`: the policy changed under the call (`Authorization.Stale`), nothing sent;
 * - `reject`: the downstream refuses the request with a typed code, nothing committed.
 */
export type Step = 'ok' | 'lose' | 'unavailable' | 'stale' | 'reject';

interface Effect {
  readonly toolName: string;
  readonly receipt: string;
  readonly body: Record<string, unknown>;
}

export class FakeDownstream {
  /** Committed effects by idempotency key. */
  readonly effects = new Map<string, Effect>();
  /** Keys sealed by a reconciliation that found nothing: a late request under them can no longer commit. */
  readonly sealed = new Set<string>();
  readonly sent: string[] = [];
  lookups = 0;
  private readonly script: Step[];

  /**
   * `refuseSeal`: a lookup finds nothing and does not seal the key (the seal refused, as a faulty downstream may).
   * `refuses`: requests the downstream refuses with a business reason (`reject`) whenever they arrive, without
   * taking a step of the script, so the script's order does not depend on when a refused request arrives.
   */
  constructor(
    script: readonly Step[] = [],
    private readonly opts: {
      readonly refuseSeal?: boolean;
      readonly refuses?: (req: DispatchRequest) => boolean;
    } = {},
  ) {
    this.script = [...script];
  }

  effectsOf(toolName: string): Effect[] {
    return [...this.effects.values()].filter((e) => e.toolName === toolName);
  }

  activities() {
    return {
      dispatchTool: (req: DispatchRequest): Promise<DispatchResponse> => this.dispatch(req),
      reconcileCall: (req: ReconcileRequest): Promise<ReconcileResponse> => this.reconcile(req),
    };
  }

  private async dispatch(req: DispatchRequest): Promise<DispatchResponse> {
    const attempt = Context.current().info.attempt;
    const step = this.opts.refuses?.(req) ? 'reject' : (this.script.shift() ?? 'ok');
    if (step === 'stale')
      throw ApplicationFailure.nonRetryable('the policy changed since the decision', Failure.AuthorizationStale);
    this.sent.push(req.keyUsed);
    if (step === 'unavailable')
      throw ApplicationFailure.retryable('connection refused, nothing committed', Failure.DispatchUnavailable);
    const base = { attempt, fence: attempt, keyUsed: req.keyUsed, workerIdentity: 'fake-downstream' };
    if (step === 'reject') {
      return {
        ...base,
        outcome: 'rejected',
        httpStatus: 422,
        body: { code: 'Wallet.InsufficientFunds' },
        replayed: false,
        errorCode: 'Wallet.InsufficientFunds',
        errorMessage: 'insufficient funds',
      };
    }
    if (this.sealed.has(req.keyUsed))
      throw ApplicationFailure.nonRetryable('the key was sealed by a reconciliation', Failure.IdempotencyKeySealed);
    const earlier = this.effects.get(req.keyUsed);
    const effect = earlier ?? this.commit(req);
    if (step === 'lose')
      throw ApplicationFailure.retryable('the response was lost after the commit', Failure.DispatchResponseLost);
    return {
      ...base,
      outcome: 'succeeded',
      httpStatus: earlier ? 200 : 201,
      body: effect.body,
      receipt: effect.receipt,
      replayed: earlier !== undefined,
    };
  }

  private commit(req: DispatchRequest): Effect {
    const args = req.body as { tenant: string; account: string; amount: { minor: number; currency: string } };
    const receipt = `rcpt_${this.effects.size + 1}`;
    const effect = {
      toolName: req.intent.toolName,
      receipt,
      body: {
        receipt,
        tenant: args.tenant,
        account: args.account,
        amount: args.amount,
        balanceAfter: { minor: 1_000_000, currency: args.amount.currency },
      },
    };
    this.effects.set(req.keyUsed, effect);
    return effect;
  }

  private async reconcile(req: ReconcileRequest): Promise<ReconcileResponse> {
    this.lookups += 1;
    const key = req.intent.operationKey;
    const found = this.effects.get(key);
    if (found) return { kind: 'found', status: 'completed', receipt: found.receipt, result: found.body };
    if (this.opts.refuseSeal) {
      // As the real activity does: a seal asked for and not confirmed is retried (retrySeal), else reported.
      if (req.seal && req.retrySeal)
        throw ApplicationFailure.retryable('no effect under the key, but it was not sealed', Failure.SealRefused);
      return { kind: 'not_found', sealed: false };
    }
    if (req.seal) this.sealed.add(key);
    return { kind: 'not_found', sealed: req.seal };
  }
}
