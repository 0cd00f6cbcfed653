/**
 * Tool dispatch and reconciliation activities: the only code that talks to downstream services on a run's
 * behalf. No retries happen here: Temporal retries the activity (one retry owner), and every retry applies the
 * run's strategy before it sends anything again.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type {
  DispatchRequest,
  DispatchResponse,
  ReconcileRequest,
  ReconcileResponse,
} from '../src/domain/activity-contracts';
import { Failure } from '../src/domain/failures';
import { strategyOf, type StrategyDeclaration } from '../src/domain/retry-strategies';
import type { Downstream, SendOutcome } from '../src/downstream/client';
import {
  resolveAuthorizeDeps,
  signAtDispatch,
  signLookupAtDispatch,
  type AuthorizeDeps,
  type SignedCapability,
} from './authorize.activities';
import type { ToolIntent } from '../src/domain/operation-key';

export interface DispatchDeps {
  /** One client per downstream service name (`wallet`, ...): a `DownstreamClient`, or a wrapper of one. */
  readonly services: Readonly<Record<string, Downstream>>;
  readonly workerIdentity: string;
  /**
   * The current policy and the capability signing key (default: the built-in policy, no key); used here to sign
   * decisions the workflow made from a held policy.
   */
  readonly authorize?: Partial<AuthorizeDeps>;
}

/** Fences count milliseconds from here, so that they stay safe integers (2^53) for centuries. */
const FENCE_EPOCH_MS = Date.UTC(2024, 0, 1);

/**
 * The fence of one attempt: an ownership epoch, not a counter. It is the time the Temporal server scheduled this
 * attempt (server clock), in ms since 2024, times 1024, plus the attempt number: a later attempt of any execution
 * of any run (a retry, a new dispatch, continue-as-new, a workflow reset, a reused workflow id) is scheduled later
 * and so outranks every earlier one; the downstream refuses a request whose fence is lower than one it accepted.
 */
export function fenceFor(scheduledAtMs: number, attempt: number): number {
  const since = Math.max(0, Math.floor(scheduledAtMs) - FENCE_EPOCH_MS);
  return since * 1024 + Math.min(Math.max(1, attempt), 1023);
}

/** A failure of this attempt, carrying its attempt number (and what it sent) so the workflow counts what happened. */
function failure(
  type: string,
  message: string,
  retryable: boolean,
  attempt: number,
  extra: object = {},
): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: !retryable, details: [{ attempt, ...extra }] });
}

function receiptOf(body: unknown): string | undefined {
  if (typeof body === 'object' && body !== null && 'receipt' in body) {
    const r = (body as { receipt: unknown }).receipt;
    return typeof r === 'string' ? r : undefined;
  }
  return undefined;
}

/** Resend only while well inside the retention window (clocks and queues are not exact). */
const RETENTION_SAFETY = 0.8;

/** One attempt of a dispatch, as every stage sees it. */
interface Attempt {
  readonly req: DispatchRequest;
  readonly n: number;
  readonly fence: number;
  /** The key this attempt sends: the strategy's key for this attempt (the operation key, for the runtime's two). */
  readonly key: string;
  readonly downstream: Downstream;
  readonly strategy: StrategyDeclaration;
  /** Whether an earlier attempt or dispatch of this call may have sent: a resend, as the stages treat it. */
  readonly resend: boolean;
  readonly base: Omit<DispatchResponse, 'outcome' | 'httpStatus' | 'body' | 'replayed'>;
  fail(type: string, message: string, retryable?: boolean, extra?: object): ApplicationFailure;
}

export function createDispatchActivities(deps: DispatchDeps) {
  const signer = resolveAuthorizeDeps(deps.authorize);
  const retentions = new Map<string, number>();
  /**
   * The downstream's declared retention. Fails closed: a contract that cannot be read (or declares no positive
   * retention) throws `Idempotency.ContractUnreadable`, so no resend is risked on an unknown window; the
   * workflow reconciles by lookup. A readable contract is cached per worker; a failure is asked again next time.
   */
  async function retentionOf(service: string, downstream: Downstream): Promise<number> {
    const cached = retentions.get(service);
    if (cached !== undefined) return cached;
    let why: string;
    try {
      const contract = await downstream.contract();
      const ms: unknown = (contract as { idempotencyRetentionMs?: unknown } | undefined)?.idempotencyRetentionMs;
      if (typeof ms === 'number' && Number.isFinite(ms) && ms > 0) {
        retentions.set(service, ms);
        return ms;
      }
      why = `it declares no positive idempotencyRetentionMs (${JSON.stringify(ms ?? null)})`;
    } catch (err) {
      why = err instanceof Error ? err.message : String(err);
    }
    throw ApplicationFailure.nonRetryable(
      `the idempotency contract of ${service} could not be read, so a same-key resend is not risked: ${why.slice(0, 200)}; reconcile instead`,
      Failure.ContractUnreadable,
    );
  }

  function client(service: string): Downstream {
    const c = deps.services[service];
    if (c === undefined)
      throw ApplicationFailure.nonRetryable(`no downstream configured for ${service}`, 'Config.MissingService');
    return c;
  }

  /** One dispatch attempt: contract and strategy → lookup before a resend → retention guard → sign → send and classify. */
  async function dispatchTool(req: DispatchRequest): Promise<DispatchResponse> {
    const attempt = begin(req);
    contractAllowsSend(attempt);
    const found = await lookUpBeforeResend(attempt);
    if (found !== undefined) return found;
    await guardRetention(attempt);
    const signed = sign(attempt);
    return sendAndClassify(attempt, signed);
  }

  /** The attempt's number, fence and key, and the evidence it reports even if it never returns (a heartbeat). */
  function begin(req: DispatchRequest): Attempt {
    const strategy = strategyOf(req.strategy);
    if (strategy === undefined) {
      throw ApplicationFailure.nonRetryable(
        `strategy ${String(req.strategy).slice(0, 100)} is not one this worker serves (nothing was sent)`,
        Failure.StrategyForbidden,
      );
    }
    const ctx = Context.current();
    const n = ctx.info.attempt;
    const fence = fenceFor(ctx.info.currentAttemptScheduledTimestampMs, n);
    // What the last attempt got to is reported even if it never returns (a timeout carries the last heartbeat).
    ctx.heartbeat({ attempt: n });
    // The runtime's strategies send the operation key itself on every attempt.
    const key = strategy.keyFor(req.keyUsed, 1, n);
    // Queue delay: how long this attempt waited between being scheduled and starting (schedule-to-start).
    const queueDelayMs = Math.max(0, Date.now() - ctx.info.currentAttemptScheduledTimestampMs);
    // The SDK's activity logger adds the run's ids and the attempt; the key sent may differ from the intent's.
    ctx.log.info('dispatch attempt', {
      callId: req.intent.logicalCallId,
      operationKey: req.intent.operationKey,
      keySent: key,
      toolName: req.intent.toolName,
      dispatch: req.dispatch,
    });
    return {
      req,
      n,
      fence,
      key,
      downstream: client(req.service),
      strategy,
      resend: n > 1 || req.dispatch > 1,
      base: { attempt: n, fence, keyUsed: key, workerIdentity: deps.workerIdentity, queueDelayMs },
      fail: (type, message, retryable = false, extra = {}) => failure(type, message, retryable, n, extra),
    };
  }

  /** Stage 1, contract and strategy: a tool whose contract is `none` is never sent twice. */
  function contractAllowsSend(a: Attempt): void {
    if (a.n > 1 && a.req.idempotency === 'none') {
      // An earlier attempt may have sent; settle by lookup or an operator.
      throw a.fail(
        Failure.DispatchNoResend,
        `${a.req.intent.toolName} is not idempotent: attempt ${a.n} does not resend`,
      );
    }
  }

  /**
   * Stage 2, lookup before a resend: an earlier attempt did not report, so its effect may exist. Under a strategy
   * that looks first, ask the downstream by key before sending anything again: its record answers for it.
   */
  async function lookUpBeforeResend(a: Attempt): Promise<DispatchResponse | undefined> {
    if (!a.resend || !a.strategy.lookUpBeforeResend) return undefined;
    const { req } = a;
    const found = await a.downstream.lookup(req.keyUsed, lookupOptions(req.service, req.intent, req.keyUsed, false));
    if (found.kind === 'unreachable') throw a.fail(Failure.DispatchUnavailable, found.reason, true);
    if (found.kind === 'refused')
      throw a.fail(Failure.CapabilityRejected, `lookup refused: ${found.code}: ${found.reason}`);
    if (found.kind !== 'found') return undefined;
    const r = found.record;
    if (r.status === 'in_progress')
      throw a.fail(Failure.IdempotencyInProgress, 'earlier attempt still in progress', true);
    if (r.status === 'completed') {
      const body = r.result;
      return {
        ...a.base,
        outcome: 'succeeded',
        httpStatus: 200,
        body,
        receipt: r.receipt,
        replayed: true,
        recoveredVia: 'receipt_lookup',
      };
    }
    if (r.status === 'failed') {
      return {
        ...a.base,
        outcome: 'rejected',
        httpStatus: 422,
        body: r.error,
        replayed: true,
        recoveredVia: 'receipt_lookup',
        errorCode: r.error?.error ?? Failure.DispatchRejected,
        errorMessage: r.error?.message ?? 'rejected by the downstream',
      };
    }
    return undefined; // sealed: the send below is refused by the downstream, typed
  }

  /**
   * Stage 3, retention guard: a pruned key turns a same-key resend into a second charge. Past the declared
   * retention nothing is resent: the workflow reconciles by lookup instead (the effect log outlives the
   * idempotency record). The downstream refuses such a request too (`IntentExpired`); this spares the request.
   */
  async function guardRetention(a: Attempt): Promise<void> {
    if (!a.strategy.guardRetention || !a.resend) return;
    const retention = await retentionOf(a.req.service, a.downstream);
    const age = Date.now() - Date.parse(a.req.intentRecordedAt);
    if (age > retention * RETENTION_SAFETY) {
      throw a.fail(
        Failure.RetentionExpired,
        `the key was sent ${age} ms ago; ${a.req.service} retains keys for ${retention} ms: reconcile instead of resending`,
      );
    }
  }

  /**
   * Stage 4, sign: every attempt signs its own capability, here, at the instant of sending. The signer re-derives
   * the call from the body, checks the workflow's decision names exactly it, and re-evaluates the current policy
   * (a policy change sends nothing). Only the token's digest, kid and jti are returned (recorded), never the token.
   */
  function sign(a: Attempt): SignedCapability | undefined {
    try {
      return signAtDispatch(signer, a.req, Date.now());
    } catch (err) {
      if (err instanceof ApplicationFailure && err.type) throw a.fail(err.type, err.message);
      throw err;
    }
  }

  /** Stage 5, send and classify: one request under the key and fence, and its answer as a typed outcome. */
  async function sendAndClassify(a: Attempt, signed: SignedCapability | undefined): Promise<DispatchResponse> {
    const { req } = a;
    const sent = await a.downstream.send(req.route, req.body, {
      key: a.key,
      argumentsHash: req.intent.argumentsHash,
      fence: a.fence,
      intentAt: req.intentRecordedAt,
      signal: Context.current().cancellationSignal,
      ...(signed !== undefined ? { capability: signed.token } : {}),
    });
    const sentCapability = signed !== undefined ? { capability: signed.record } : {};
    switch (sent.kind) {
      case 'ok': {
        const recovered = a.n > 1 && sent.replayed ? { recoveredVia: 'same_key_replay' as const } : {};
        const body = sent.body;
        const answer = { outcome: 'succeeded' as const, httpStatus: sent.status, body, receipt: receiptOf(body) };
        return { ...a.base, ...sentCapability, ...answer, replayed: sent.replayed, ...recovered };
      }
      case 'rejected':
        return rejected(a, sent, sentCapability);
      case 'in_progress':
        throw a.fail(Failure.IdempotencyInProgress, 'an attempt with this key is in progress downstream', true);
      case 'unavailable':
        throw a.fail(Failure.DispatchUnavailable, `downstream unavailable, nothing committed: ${sent.reason}`, true);
      case 'response_lost':
        throw a.fail(Failure.DispatchResponseLost, `request sent, response lost: ${sent.reason}`, true);
    }
  }

  /** A refusal: of the capability or the key (typed failures, no effect), or of the business (an answer). */
  function rejected(
    a: Attempt,
    sent: Extract<SendOutcome, { kind: 'rejected' }>,
    sentCapability: { capability?: SignedCapability['record'] },
  ): DispatchResponse {
    if (sent.code === 'Capability.Invalid')
      throw a.fail(Failure.CapabilityRejected, 'downstream refused the capability', false, sentCapability);
    const keyRefusals: readonly string[] = [
      Failure.IdempotencyArgumentsMismatch,
      Failure.IdempotencyKeySealed,
      Failure.FenceStale,
    ];
    if (keyRefusals.includes(sent.code)) throw a.fail(sent.code, `downstream refused the key: ${sent.code}`);
    if (sent.code === Failure.IntentExpired || sent.code === Failure.IntentTimeMissing) {
      // This request did nothing; an earlier attempt may have. The workflow reconciles (lookup and seal).
      throw a.fail(sent.code, `downstream refused the intent time ${a.req.intentRecordedAt}: ${sent.code}`);
    }
    const message =
      typeof sent.body === 'object' && sent.body !== null && 'message' in sent.body
        ? String((sent.body as { message: unknown }).message)
        : sent.code;
    return {
      ...a.base,
      ...sentCapability,
      outcome: 'rejected',
      httpStatus: sent.status,
      body: sent.body,
      replayed: false,
      errorCode: sent.reason ?? sent.code,
      errorMessage: message,
    };
  }

  /** Lookup options carrying a capability for exactly this key, tenant and service, signed here at dispatch. */
  function lookupOptions(service: string, intent: ToolIntent, key: string, seal: boolean) {
    const grant = {
      service,
      operationKey: key,
      tenant: intent.tenant,
      principalId: intent.principalId,
      policyVersion: intent.policyVersion,
      seal,
    };
    const capability = signLookupAtDispatch(signer, grant, Date.now());
    return { tenant: intent.tenant, seal, ...(capability === undefined ? {} : { capability }) };
  }

  async function reconcileCall(req: ReconcileRequest): Promise<ReconcileResponse> {
    const key = req.intent.operationKey;
    const found = await client(req.service).lookup(key, lookupOptions(req.service, req.intent, key, req.seal));
    if (found.kind === 'unreachable') throw ApplicationFailure.retryable(found.reason, Failure.ReconcileUnreachable);
    // The service refused the lookup itself (no or a wrong capability): retrying the same request cannot help.
    if (found.kind === 'refused')
      throw ApplicationFailure.nonRetryable(
        `lookup refused: ${found.code}: ${found.reason}`,
        Failure.CapabilityRejected,
      );
    if (found.kind === 'not_found') {
      // A seal the downstream did not confirm proves nothing: asked to, try the seal again (Temporal retries).
      if (req.seal && !found.sealed && req.retrySeal === true)
        throw ApplicationFailure.retryable(
          `${req.service} found no effect under the key but did not seal it`,
          Failure.SealRefused,
        );
      return { kind: 'not_found', sealed: found.sealed };
    }
    const r = found.record;
    if (r.status === 'in_progress')
      throw ApplicationFailure.retryable('effect still in progress downstream', Failure.IdempotencyInProgress);
    if (r.status === 'sealed') return { kind: 'not_found', sealed: true };
    return {
      kind: 'found',
      status: r.status,
      ...(r.receipt !== undefined ? { receipt: r.receipt } : {}),
      ...(r.result !== undefined ? { result: r.result } : {}),
      ...(r.error !== undefined ? { errorCode: r.error.error } : {}),
    };
  }

  return { dispatchTool, reconcileCall };
}
