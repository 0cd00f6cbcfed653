/**
 * The operator's hand on a run: settle a call that reconciliation left UNKNOWN, recorded with who and why.
 *
 * A resolution is not taken on trust. Before anything is recorded the handler asks the downstream by key and
 * seals the key (the `reconcileCall` activity with `seal: true`), then accepts only what the answer confirms:
 * FAILED while the downstream holds no effect (the key is sealed now, so none can appear later), SUCCEEDED only
 * with the receipt the downstream holds. Anything else is refused with an `ApplicationFailure` (the update
 * fails, the workflow task does not) and nothing is recorded; the call stays UNKNOWN. The lookup's evidence is
 * recorded beside who and why.
 *
 * Who resolves is verified: the operator's token is checked by the `verifyIdentity` activity, and the operator
 * must belong to the run's tenant and hold a role the held policy lists for the call's tool (`operators`). A
 * cancel request (`requestCancel`) is verified the same way.
 */
import { ApplicationFailure, type CancellationScope, setHandler, TemporalFailure } from '@temporalio/workflow';
import { activities } from './proxies';
import type { ReconcileResponse } from '../src/domain/activity-contracts';
import { refuseUndecodable } from '../src/domain/undecodable';
import { Failure } from '../src/domain/failures';
import type { ToolIntent } from '../src/domain/operation-key';
import type { ResolutionEvidence } from '../src/domain/ledger-events';
import type { CallView } from '../src/domain/reducer';
import { workflowTools } from '../src/tools/workflow-registry';
import { actorRecord, isTokenShaped, type ActorRecord, type VerifiedIdentity } from '../src/domain/verified-identity';
import type { Policy } from '../src/domain/policy-format';
import { mayCancel, mayResolve } from '../src/policy/policy-rules';
import { requestCancelUpdate, resolveCallUpdate, type OperatorResolution } from './definitions';
import { forbidden, verifyActor } from './identity';
import { evidenceOf } from './steps/settle';
import type { Ledger } from './ledger';

/** Longest accepted `operator` and `receipt` (characters); longer input is refused, never truncated. */
const MAX_NAME = 200;
/** Longest accepted `reason` (characters). */
const MAX_REASON = 2_000;

/**
 * The lookup an operator waits on: 10 s per attempt, 3 attempts 0.5 s apart (about 31 s at worst). Fixed rather
 * than derived from the run deadline: the operator acts while the run waits, possibly close to its deadline.
 */
const OPERATOR_LOOKUP = {
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3, initialInterval: '500ms', backoffCoefficient: 1 },
} as const;

export function handleOperatorResolutions(
  ledger: Ledger,
  onChange: () => void,
  policy: () => Policy | undefined,
): void {
  const checking = new Set<string>();
  setHandler(
    resolveCallUpdate,
    async (res) => {
      try {
        checkResolution(ledger, res); // the same check as the validator, so the handler never relies on it alone
        const actor = await verifyActor(res.token, `operator of ${res.logicalCallId}`, {
          purpose: 'resolve',
          runId: ledger.projection.runId ?? '',
          callId: res.logicalCallId,
        });
        allowOperator(ledger, res, actor, policy());
        return { ...(await recordVerified(ledger, res, onChange, checking, actor)), operator: actor.principalId };
      } catch (err) {
        // Only a TemporalFailure fails just the update; any other error would fail the workflow task.
        if (err instanceof TemporalFailure) throw err;
        throw invalid(`the resolution could not be checked: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    { validator: (res) => checkResolution(ledger, res) },
  );
}

/** The verified operator must be of the run's tenant and hold a role the held policy lists for the call's tool. */
function allowOperator(
  ledger: Ledger,
  res: OperatorResolution,
  actor: VerifiedIdentity,
  policy: Policy | undefined,
): void {
  const p = ledger.projection;
  const call = callOf(ledger, res.logicalCallId);
  if (actor.tenant !== p.tenant)
    throw forbidden(`${actor.principalId} belongs to tenant ${actor.tenant}, not ${p.tenant ?? '?'}`);
  if (!policy) throw forbidden('the run holds no policy naming who may resolve calls');
  if (call === undefined || !mayResolve(policy, call.toolName, actor.roles)) {
    throw forbidden(
      `${actor.principalId} (roles: ${actor.roles.join(', ') || 'none'}) may not resolve ${call?.toolName ?? 'this call'} under policy ${policy.version}`,
    );
  }
}

/**
 * `requestCancel`: a verified stop. The requester is the run's own principal or holds a role the held policy
 * lists in `cancellers` (a run that has made no decision yet holds no policy: only its principal may stop it).
 * Returns who asked, for the `CancellationRequested` event.
 */
export function handleCancelRequests(
  ledger: Ledger,
  scope: CancellationScope,
  policy: () => Policy | undefined,
  run: { readonly principalId: string; readonly tenant: string },
): () => { readonly actor: ActorRecord; readonly reason: string } | undefined {
  let by: { actor: ActorRecord; reason: string } | undefined;
  const check = (req: unknown): { token: string; reason: string } => {
    refuseUndecodable(req, 'the cancel request');
    if (typeof req !== 'object' || req === null) throw cancelInvalid('a cancel request must be an object');
    const r = req as Record<string, unknown>;
    if (!isTokenShaped(r['token']))
      throw ApplicationFailure.create({
        type: Failure.IdentityInvalid,
        nonRetryable: true,
        message: 'a cancel request needs the requester’s identity token (a compact JWS)',
      });
    if (!nonEmpty(r['reason'], MAX_REASON))
      throw cancelInvalid(`a cancel request needs a reason (at most ${MAX_REASON} characters)`);
    if (ledger.projection.status === 'stopped') throw cancelInvalid('the run has stopped already');
    return { token: r['token'], reason: r['reason'] as string };
  };
  setHandler(
    requestCancelUpdate,
    async (req) => {
      try {
        const { token, reason } = check(req);
        const actor = await verifyActor(token, 'cancel request', {
          purpose: 'cancel',
          runId: ledger.projection.runId ?? '',
        });
        if (actor.tenant !== run.tenant)
          throw forbidden(`${actor.principalId} belongs to tenant ${actor.tenant}, not ${run.tenant}`);
        const held = policy();
        if (actor.principalId !== run.principalId && !(held && mayCancel(held, actor.roles))) {
          throw forbidden(
            `${actor.principalId} (roles: ${actor.roles.join(', ') || 'none'}) may not cancel a run of ${run.principalId}`,
          );
        }
        by ??= { actor: actorRecord(actor), reason };
        scope.cancel();
        return { accepted: true as const };
      } catch (err) {
        if (err instanceof TemporalFailure) throw err;
        throw cancelInvalid(
          `the cancel request could not be checked: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    },
    { validator: (req) => void check(req) },
  );
  return () => by;
}

function cancelInvalid(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: Failure.OperatorResolutionInvalid, nonRetryable: true, message });
}

async function recordVerified(
  ledger: Ledger,
  res: OperatorResolution,
  onChange: () => void,
  checking: Set<string>,
  actor: VerifiedIdentity,
): Promise<{ accepted: true }> {
  const id = res.logicalCallId;
  const call = callOf(ledger, id) as CallView;
  const service = call.service ?? workflowTools.get(call.toolName)?.service;
  if (call.operationKey === null || service === undefined) {
    throw invalid(`call ${id} has no operation key or service recorded: it cannot be looked up`);
  }
  if (checking.has(id)) throw refused(`another resolution of call ${id} is being checked; try again`);
  checking.add(id);
  try {
    const answer = await lookUpForOperator(ledger, call, service);
    const evidence = evidenceOf(answer, service, call.operationKey);
    const now = ledger.projection;
    if (now.status === 'stopped') throw refused(`the run stopped while the lookup ran; nothing recorded`);
    if (now.calls[id]?.state !== 'UNKNOWN')
      throw refused(`call ${id} was settled while the lookup ran; nothing recorded`);
    const contradiction = whyRefused(res, evidence);
    if (contradiction !== undefined) {
      throw ApplicationFailure.create({
        type: Failure.OperatorResolutionRefused,
        nonRetryable: true,
        message: `${contradiction}; nothing recorded, call ${id} stays UNKNOWN`,
        details: [evidence],
      });
    }
    const receipt = res.outcome === 'SUCCEEDED' ? evidence.receipt : undefined;
    ledger.append({
      type: 'ToolEffectReconciled',
      logicalCallId: id,
      via: 'operator',
      outcome: res.outcome,
      ...(receipt !== undefined ? { receipt } : {}),
      detail: `${actor.principalId}: ${res.reason}`,
      evidence,
      actor: actorRecord(actor),
    });
    onChange();
    return { accepted: true as const };
  } finally {
    checking.delete(id);
  }
}

/** Asks `service` by the call's key (and seals it); a lookup that does not answer refuses the resolution. */
async function lookUpForOperator(ledger: Ledger, call: CallView, service: string): Promise<ReconcileResponse> {
  const id = call.logicalCallId;
  try {
    return await activities.reconcileCall.executeWithOptions({ ...OPERATOR_LOOKUP, summary: `operator lookup ${id}` }, [
      { intent: intentOf(ledger, call), service, seal: true },
    ]);
  } catch (err) {
    const why = err instanceof TemporalFailure ? (err.cause?.message ?? err.message) : String(err);
    throw ApplicationFailure.create({
      type: Failure.OperatorLookupUnreachable,
      nonRetryable: true,
      message: `${service} did not answer the lookup of key ${call.operationKey} (${why.slice(0, 200)}); nothing recorded, call ${id} stays UNKNOWN: try again when ${service} answers`,
    });
  }
}

/** Why the downstream's answer contradicts the operator, or undefined when it confirms the resolution. */
function whyRefused(res: OperatorResolution, ev: ResolutionEvidence): string | undefined {
  const where = `${ev.service} under key ${ev.operationKey}`;
  if (ev.lookup === 'not_found') return `${where} is neither found nor sealed, so no outcome can be confirmed`;
  const holdsEffect = ev.lookup === 'found' && ev.status === 'completed';
  if (res.outcome === 'FAILED') {
    return holdsEffect
      ? `FAILED refused: ${where} holds the effect (receipt ${ev.receipt ?? 'none'}); settle it as SUCCEEDED with that receipt`
      : undefined;
  }
  if (ev.lookup === 'sealed') {
    return `SUCCEEDED refused: ${where} holds no effect, and the key is now sealed so none can appear: the outcome is FAILED`;
  }
  if (!holdsEffect) {
    return `SUCCEEDED refused: ${where} retained a refusal (${ev.errorCode ?? 'no code'}), no effect: the outcome is FAILED`;
  }
  if (ev.receipt === undefined) return `SUCCEEDED refused: ${where} holds the effect but reports no receipt to confirm`;
  if (res.receipt !== ev.receipt) {
    return `SUCCEEDED refused: the receipt ${res.receipt === undefined ? '(none given)' : JSON.stringify(res.receipt)} is not the one ${where} holds (${ev.receipt})`;
  }
  return undefined;
}

/**
 * The intent a lookup needs, rebuilt from the projection (which survives continue-as-new): the lookup itself
 * uses only the operation key; the other fields name the call in the activity's input.
 */
function intentOf(ledger: Ledger, call: CallView): ToolIntent {
  const p = ledger.projection;
  return {
    runId: p.runId ?? '',
    providerCallId: call.providerCallIds[0] ?? '',
    logicalCallId: call.logicalCallId,
    operationKey: call.operationKey ?? '',
    toolName: call.toolName,
    toolVersion: workflowTools.get(call.toolName)?.version ?? 0,
    argumentsHash: call.argumentsHash ?? '',
    principalId: p.principalId ?? '',
    tenant: p.tenant ?? '',
    policyVersion: call.policyVersion ?? '',
    deadlineAt: '',
  };
}

/** The call under `id`, only as an own entry (an id like `__proto__` names no call). */
function callOf(ledger: Ledger, id: unknown): CallView | undefined {
  const calls = ledger.projection.calls;
  return typeof id === 'string' && Object.prototype.hasOwnProperty.call(calls, id) ? calls[id] : undefined;
}

/** The validator: a well-formed resolution of a call that is UNKNOWN, with who (a token) and why. Throws typed failures. */
function checkResolution(ledger: Ledger, res: unknown): asserts res is OperatorResolution {
  refuseUndecodable(res, 'the operator resolution');
  if (typeof res !== 'object' || res === null) throw invalid('a resolution must be an object');
  const r = res as Record<string, unknown>;
  const call = callOf(ledger, r['logicalCallId']);
  if (call === undefined) throw invalid(`no call ${String(r['logicalCallId']).slice(0, MAX_NAME)} in this run`);
  if (call.state !== 'UNKNOWN') throw invalid(`call ${call.logicalCallId} is not UNKNOWN`);
  if (r['outcome'] !== 'SUCCEEDED' && r['outcome'] !== 'FAILED') throw invalid('outcome must be SUCCEEDED or FAILED');
  if (!isTokenShaped(r['token'])) {
    throw ApplicationFailure.create({
      type: Failure.IdentityInvalid,
      nonRetryable: true,
      message: 'an operator resolution needs the operator’s identity token (a compact JWS)',
    });
  }
  if (!nonEmpty(r['reason'], MAX_REASON))
    throw invalid(`an operator resolution needs why (at most ${MAX_REASON} characters)`);
  if (r['receipt'] !== undefined && !nonEmpty(r['receipt'], MAX_NAME)) {
    throw invalid(`a receipt must be a non-empty string of at most ${MAX_NAME} characters`);
  }
}

function nonEmpty(v: unknown, max: number): boolean {
  return typeof v === 'string' && v.trim() !== '' && v.length <= max;
}

function invalid(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: Failure.OperatorResolutionInvalid, nonRetryable: true, message });
}

function refused(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: Failure.OperatorResolutionRefused, nonRetryable: true, message });
}
