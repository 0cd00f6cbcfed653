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
import { isLabStrategy } from '../src/domain/run';
import { strategyOf } from '../src/domain/retry-strategies';
import type { DownstreamClient } from '../src/downstream/client';
import {
  resolveAuthorizeDeps,
  signAtDispatch,
  signLookupAtDispatch,
  type AuthorizeDeps,
  type SignedCapability,
} from './authorize.activities';
import type { ToolIntent } from '../src/domain/identity';

export interface DispatchDeps {
  /** One client per downstream service name (`wallet`, ...). */
  readonly services: Readonly<Record<string, DownstreamClient>>;
  readonly workerIdentity: string;
  /**
   * The current policy and the capability signing key (default: the built-in policy, no key); used here to sign
   * decisions the workflow made from a held policy.
   */
  readonly authorize?: Partial<AuthorizeDeps>;
  /** Serve lab-only strategies (blind_retry: the demo, the fault lab). Default false: a production worker refuses them. */
  readonly labStrategies?: boolean;
  /**
   * Observes each attempt just before it sends and just after the downstream answered. None in production: the
   * fault lab installs its crash points here (lab/faults/crash-points.ts, `crashPointProbe`).
   */
  readonly probe?: DispatchProbe;
}

/** A point of a dispatch attempt an observer may act at (the fault lab kills, pauses or delays the worker there). */
export type DispatchProbe = (phase: 'before_send' | 'after_response', toolName: string) => Promise<void>;

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

/**
 * The intent time every attempt sends (`X-Intent-At`): the ledger time the workflow recorded the intent at.
 * A request from a workflow that did not pass it (an activity scheduled before the field existed) falls back,
 * for its first workflow-level dispatch only, to the activity's first scheduling (the same workflow task as the
 * intent, or later: never earlier). For a later dispatch nothing safe is known: nothing is sent, reconcile.
 */
function intentTimeOf(req: DispatchRequest, firstScheduledMs: number): string {
  if (req.intentRecordedAt !== undefined && Number.isFinite(Date.parse(req.intentRecordedAt)))
    return req.intentRecordedAt;
  if (req.dispatch <= 1 && Number.isFinite(firstScheduledMs) && firstScheduledMs > 0)
    return new Date(firstScheduledMs).toISOString();
  throw ApplicationFailure.nonRetryable(
    `dispatch ${req.dispatch} of ${req.intent.logicalCallId} has no recorded intent time: nothing sent; reconcile by key`,
    Failure.IntentTimeMissing,
  );
}

export function createDispatchActivities(deps: DispatchDeps) {
  const signer = resolveAuthorizeDeps(deps.authorize);
  const retentions = new Map<string, number>();
  /**
   * The downstream's declared retention. Fails closed: a contract that cannot be read (or declares no positive
   * retention) throws `Idempotency.ContractUnreadable`, so no resend is risked on an unknown window; the
   * workflow reconciles by lookup. A readable contract is cached per worker; a failure is asked again next time.
   */
  async function retentionOf(service: string, downstream: DownstreamClient): Promise<number> {
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

  function client(service: string): DownstreamClient {
    const c = deps.services[service];
    if (c === undefined)
      throw ApplicationFailure.nonRetryable(`no downstream configured for ${service}`, 'Config.MissingService');
    return c;
  }

  async function dispatchTool(req: DispatchRequest): Promise<DispatchResponse> {
    if (isLabStrategy(req.strategy) && deps.labStrategies !== true) {
      throw ApplicationFailure.nonRetryable(
        `strategy ${req.strategy} is lab-only; this worker refuses it (nothing was sent)`,
        Failure.StrategyForbidden,
      );
    }
    const ctx = Context.current();
    const attempt = ctx.info.attempt;
    const fence = fenceFor(ctx.info.currentAttemptScheduledTimestampMs, attempt);
    // What the last attempt got to is reported even if it never returns (a timeout carries the last heartbeat).
    ctx.heartbeat({ attempt });
    const fail = (type: string, message: string, retryable = false): ApplicationFailure =>
      failure(type, message, retryable, attempt);
    const downstream = client(req.service);
    // The naive strategy sends every Temporal retry under yet another fresh key: that is how it double-charges.
    const strategy = strategyOf(req.strategy);
    const key = strategy.keyFor(req.keyUsed, 1, attempt);
    // Queue delay: how long this attempt waited between being scheduled and starting (schedule-to-start).
    const queueDelayMs = Math.max(0, Date.now() - ctx.info.currentAttemptScheduledTimestampMs);
    const base: Omit<DispatchResponse, 'outcome' | 'httpStatus' | 'body' | 'replayed'> = {
      attempt,
      fence,
      keyUsed: key,
      workerIdentity: deps.workerIdentity,
      queueDelayMs,
    };
    let recoveredVia: DispatchResponse['recoveredVia'];
    // The SDK's activity logger adds the run's ids and the attempt; the key sent may differ from the intent's.
    ctx.log.info('dispatch attempt', {
      callId: req.intent.logicalCallId,
      operationKey: req.intent.operationKey,
      keySent: key,
      toolName: req.intent.toolName,
      dispatch: req.dispatch,
    });
    await deps.probe?.('before_send', req.intent.toolName);

    if (attempt > 1 && req.idempotency === 'none') {
      // The tool's contract: never sent twice. An earlier attempt may have sent; settle by lookup or an operator.
      throw fail(
        Failure.DispatchNoResend,
        `${req.intent.toolName} is not idempotent: attempt ${attempt} does not resend`,
      );
    }
    if ((attempt > 1 || req.dispatch > 1) && strategy.lookUpBeforeResend) {
      // An earlier attempt did not report: its effect may exist. Ask before sending anything again.
      const found = await downstream.lookup(req.keyUsed, lookupOptions(req.service, req.intent, req.keyUsed, false));
      if (found.kind === 'unreachable') throw fail(Failure.DispatchUnavailable, found.reason, true);
      if (found.kind === 'refused')
        throw fail(Failure.CapabilityRejected, `lookup refused: ${found.code}: ${found.reason}`);
      if (found.kind === 'found') {
        const r = found.record;
        if (r.status === 'in_progress')
          throw fail(Failure.IdempotencyInProgress, 'earlier attempt still in progress', true);
        if (r.status === 'completed') {
          return {
            ...base,
            outcome: 'succeeded',
            httpStatus: 200,
            body: r.result,
            receipt: r.receipt,
            replayed: true,
            recoveredVia: 'receipt_lookup',
          };
        }
        if (r.status === 'failed') {
          return {
            ...base,
            outcome: 'rejected',
            httpStatus: 422,
            body: r.error,
            replayed: true,
            errorCode: r.error?.error ?? Failure.DispatchRejected,
            errorMessage: r.error?.message ?? 'rejected by the downstream',
          };
        }
      }
    }

    const intentAt = intentTimeOf(req, ctx.info.scheduledTimestampMs);
    if (strategy.guardRetention && (attempt > 1 || req.dispatch > 1)) {
      // A pruned key turns a same-key retry into a second charge. Past the declared retention, do not resend:
      // the workflow reconciles by lookup instead (the effect log outlives the idempotency record). The
      // downstream refuses such a request too (`IntentExpired`); this guard spares the request and decides early.
      const retention = await retentionOf(req.service, downstream);
      const age = Date.now() - Date.parse(intentAt);
      if (age > retention * RETENTION_SAFETY) {
        throw fail(
          Failure.RetentionExpired,
          `the key was sent ${age} ms ago; ${req.service} retains keys for ${retention} ms: reconcile instead of resending`,
        );
      }
    }
    // Every attempt signs its own capability, here, at the instant of sending: the signer re-derives the call from
    // the body, checks the workflow's decision names exactly it, and re-evaluates the current policy (a policy
    // change sends nothing). A capability an old workflow recorded in `req.capability` is never sent: tokens
    // are not taken from history. Only the token's digest, kid and jti are returned (recorded), never the token.
    let signed: SignedCapability | undefined;
    try {
      signed = signAtDispatch(signer, req, Date.now());
    } catch (err) {
      if (err instanceof ApplicationFailure && err.type) throw fail(err.type, err.message);
      throw err;
    }
    const capability = signed?.token;
    const sentCapability = signed !== undefined ? { capability: signed.record } : {};
    const sent = await downstream.send(req.route, req.body, {
      key,
      argumentsHash: req.intent.argumentsHash,
      fence,
      intentAt,
      signal: ctx.cancellationSignal,
      ...(capability !== undefined ? { capability } : {}),
    });
    await deps.probe?.('after_response', req.intent.toolName);
    switch (sent.kind) {
      case 'ok':
        if (attempt > 1 && sent.replayed) recoveredVia = 'same_key_replay';
        return {
          ...base,
          ...sentCapability,
          outcome: 'succeeded',
          httpStatus: sent.status,
          body: sent.body,
          receipt: receiptOf(sent.body),
          replayed: sent.replayed,
          ...(recoveredVia ? { recoveredVia } : {}),
        };
      case 'rejected': {
        if (sent.code === 'Capability.Invalid') {
          throw failure(
            Failure.CapabilityRejected,
            'downstream refused the capability',
            false,
            attempt,
            sentCapability,
          );
        }
        if (
          sent.code === Failure.IdempotencyArgumentsMismatch ||
          sent.code === Failure.IdempotencyKeySealed ||
          sent.code === Failure.FenceStale
        ) {
          throw fail(sent.code, `downstream refused the key: ${sent.code}`);
        }
        if (sent.code === Failure.IntentExpired || sent.code === Failure.IntentTimeMissing) {
          // This request did nothing; an earlier attempt may have. The workflow reconciles (lookup and seal).
          throw fail(sent.code, `downstream refused the intent time ${intentAt}: ${sent.code}`);
        }
        const message =
          typeof sent.body === 'object' && sent.body !== null && 'message' in sent.body
            ? String((sent.body as { message: unknown }).message)
            : sent.code;
        return {
          ...base,
          ...sentCapability,
          outcome: 'rejected',
          httpStatus: sent.status,
          body: sent.body,
          replayed: false,
          errorCode: sent.reason ?? sent.code,
          errorMessage: message,
        };
      }
      case 'in_progress':
        throw fail(Failure.IdempotencyInProgress, 'an attempt with this key is in progress downstream', true);
      case 'unavailable':
        throw fail(Failure.DispatchUnavailable, `downstream unavailable, nothing committed: ${sent.reason}`, true);
      case 'response_lost':
        throw fail(Failure.DispatchResponseLost, `request sent, response lost: ${sent.reason}`, true);
    }
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
    if (found.kind === 'not_found') return { kind: 'not_found', sealed: found.sealed };
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
