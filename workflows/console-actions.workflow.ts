/**
 * What the operator console does where no live run can: a closed run takes no updates, and a lookup that only
 * reads must not be an update that changes a run. Two small workflows, each started by the console on the run's
 * task queue, under the verified identity of the person who asked:
 *
 * - `lookUpCall`: ask the downstream by operation key (the `reconcileCall` activity, `seal: false`) and return its
 *   answer. Nothing is sealed, nothing recorded in the run.
 * - `settleAbandoned`: for one effect a closed run (terminated, timed out, failed) left standing, look the key up
 *   with seal (so a late request can no longer commit), and where the effect stands and the run registered a
 *   compensation for it (`CompensationRegistered`), dispatch that compensation through `dispatchTool` (the signer
 *   authorizes it at dispatch against the current policy, as the run's own saga would).
 *
 * Both verify the token first (the `verifyIdentity` activity, which also returns the worker's current policy) and
 * refuse an actor of another tenant or without a role the policy lists in `operators` for the call's tool. Every
 * refusal is an `ApplicationFailure` with a type (`Identity.*`, `Actor.Forbidden`, `Console.*`): the console shows
 * it. Who asked and why is this workflow's own record: its input (the token encrypted by the codec) and its result
 * (the verified actor, never the token).
 */
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DispatchRequest, ReconcileResponse } from '../src/domain/activity-contracts';
import { hashCanonical, type Json } from '../src/domain/canonical';
import { Failure } from '../src/domain/failures';
import { deriveOperationKey, type ToolIntent } from '../src/domain/operation-key';
import { actorRecord, isTokenShaped, type ActorRecord, type VerifiedIdentity } from '../src/domain/verified-identity';
import {
  dispatchAuthorization,
  authorizationInput,
  type DispatchAuthorization,
  type HeldPolicy,
} from '../src/domain/authorization';
import { evaluate } from '../src/policy/evaluate';
import type { AnyTool } from '../src/domain/tool';
import { targetOf } from '../src/domain/transport';
import { mayResolve } from '../src/policy/policy-rules';
import { workflowTools } from '../src/tools/workflow-registry';

/** The console's own refusals (the rest are the core's `Identity.*` and `Actor.Forbidden`). */
export const ConsoleFailure = {
  InputInvalid: 'Console.InputInvalid',
  /** What the console read from the run's history does not hash to what the run recorded: nothing is sent. */
  EvidenceMismatch: 'Console.EvidenceMismatch',
} as const;

/** 10 s per attempt, 3 attempts 0.5 s apart: a person waits on the answer. */
const ONE_REQUEST = {
  startToCloseTimeout: '10s',
  retry: { maximumAttempts: 3, initialInterval: '500ms', backoffCoefficient: 1 },
} as const;
const { verifyIdentity, reconcileCall, dispatchTool } = proxyActivities<Activities>(ONE_REQUEST);

export interface LookUpCallInput {
  readonly token: string;
  readonly intent: ToolIntent;
  readonly service: string;
}

/** A lookup's answer, or why none came. */
export type LookupAnswer = ReconcileResponse | { readonly kind: 'unreachable'; readonly detail: string };

export interface LookUpCallResult {
  readonly actor: ActorRecord;
  readonly service: string;
  readonly operationKey: string;
  readonly answer: LookupAnswer;
  readonly checkedAt: string;
}

export interface SettleAbandonedInput {
  readonly token: string;
  readonly reason: string;
  /** The closed run, as Temporal names it. */
  readonly run: { readonly workflowId: string; readonly runId: string };
  /** The forward call as its `dispatchTool` input recorded it in the run's history. */
  readonly intent: ToolIntent;
  readonly service: string;
  readonly body: Json;
  /** The run's `CompensationRegistered` for this call, when it recorded one: only then is a compensation sent. */
  readonly registered?: { readonly operationKey: string; readonly argumentsHash: string; readonly toolName: string };
}

export interface SettleAbandonedResult {
  readonly actor: ActorRecord;
  readonly reason: string;
  readonly logicalCallId: string;
  readonly operationKey: string;
  readonly forward: LookupAnswer;
  readonly compensation?: {
    readonly toolName: string;
    readonly operationKey: string;
    readonly outcome: 'OFFSET' | 'NOTHING_TO_OFFSET' | 'FAILED' | 'UNKNOWN';
    readonly receipt?: string;
    readonly detail: string;
  };
  /** `no_effect`: nothing stands (and the key is sealed); `offset`: compensated; `left`: still standing. */
  readonly outcome: 'no_effect' | 'offset' | 'left';
  readonly detail: string;
}

function refuse(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, nonRetryable: true, message });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown, max = 200): v is string => typeof v === 'string' && v.trim() !== '' && v.length <= max;

function checkIntent(v: unknown): ToolIntent {
  if (!isRecord(v)) throw refuse(ConsoleFailure.InputInvalid, 'the call’s intent is missing');
  for (const k of ['runId', 'logicalCallId', 'operationKey', 'toolName', 'argumentsHash', 'principalId', 'tenant'])
    if (!text(v[k])) throw refuse(ConsoleFailure.InputInvalid, `the call’s intent has no valid ${k}`);
  return v as unknown as ToolIntent;
}

/**
 * The verified actor, who must be of the intent's tenant and hold an operator role for its tool, and the policy
 * the worker holds now (a compensation is authorized under it).
 */
async function operatorFor(
  token: unknown,
  intent: ToolIntent,
): Promise<VerifiedIdentity & { readonly policy: HeldPolicy }> {
  if (!isTokenShaped(token)) throw refuse(Failure.IdentityInvalid, 'no identity token, or not a compact JWS');
  let verified: VerifiedIdentity & { readonly policy?: HeldPolicy };
  try {
    // An operator's act on that call of that run: a `resolve` token for exactly it (src/identity/purpose.ts).
    verified = await verifyIdentity({
      token,
      includePolicy: true,
      purpose: 'resolve',
      runId: intent.runId,
      callId: intent.logicalCallId,
    });
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof ApplicationFailure && typeof cause.type === 'string' && cause.type.startsWith('Identity.'))
      throw refuse(cause.type, `${cause.message}; nothing done`);
    throw refuse(Failure.IdentityInvalid, 'the identity could not be verified; nothing done');
  }
  const { policy, ...actor } = verified;
  if (actor.tenant !== intent.tenant)
    throw refuse(
      Failure.ActorForbidden,
      `${actor.principalId} belongs to tenant ${actor.tenant}, not ${intent.tenant}`,
    );
  if (!policy) throw refuse(Failure.ActorForbidden, 'the worker could not read a policy naming operators');
  if (!mayResolve(policy.document, intent.toolName, actor.roles))
    throw refuse(
      Failure.ActorForbidden,
      `${actor.principalId} (roles: ${actor.roles.join(', ') || 'none'}) may not act on ${intent.toolName} calls under policy ${policy.document.version}`,
    );
  return { ...actor, policy };
}

async function lookUp(intent: ToolIntent, service: string, seal: boolean): Promise<LookupAnswer> {
  try {
    return await reconcileCall({ intent, service, seal });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause;
    return { kind: 'unreachable', detail: (cause?.message ?? String(err)).slice(0, 300) };
  }
}

const now = (): string => new Date(Date.now()).toISOString();

/** The held policy's decision for the compensation, as the dispatch activity signs it; a refusal sends nothing. */
function authorizeCompensation(
  intent: ToolIntent,
  tool: AnyTool,
  args: unknown,
  ctx: { readonly tenant: string; readonly principalId: string },
  policy: HeldPolicy,
): DispatchAuthorization {
  const input = authorizationInput(
    tool,
    args,
    ctx,
    { ...intent, origin: 'compensation' },
    { keyMode: 'exact', nowMs: Date.now() },
  );
  const decision = evaluate(policy.document, input);
  if (decision.kind !== 'allowed')
    throw refuse(
      Failure.AuthorizationDenied,
      `policy ${policy.document.version} does not allow ${tool.name}: ${decision.reason}`,
    );
  return dispatchAuthorization(policy, decision);
}

export async function lookUpCall(input: LookUpCallInput): Promise<LookUpCallResult> {
  if (!isRecord(input) || !text(input.service)) throw refuse(ConsoleFailure.InputInvalid, 'a lookup names a service');
  const intent = checkIntent(input.intent);
  const { policy: _policy, ...actor } = await operatorFor(input.token, intent);
  const answer = await lookUp(intent, input.service, false);
  return {
    actor: actorRecord(actor),
    service: input.service,
    operationKey: intent.operationKey,
    answer,
    checkedAt: now(),
  };
}

export async function settleAbandoned(input: SettleAbandonedInput): Promise<SettleAbandonedResult> {
  if (!isRecord(input) || !text(input.service) || !text(input.reason, 2_000))
    throw refuse(ConsoleFailure.InputInvalid, 'a settlement names a service and a reason (at most 2,000 characters)');
  const intent = checkIntent(input.intent);
  const { policy, ...actor } = await operatorFor(input.token, intent);
  if (hashCanonical(input.body) !== intent.argumentsHash)
    throw refuse(ConsoleFailure.EvidenceMismatch, 'the recorded body does not hash to the intent’s arguments hash');
  const base = { actor: actorRecord(actor), reason: input.reason, logicalCallId: intent.logicalCallId };
  const ids = { ...base, operationKey: intent.operationKey };
  const forward = await lookUp(intent, input.service, true);
  if (forward.kind === 'unreachable')
    return { ...ids, forward, outcome: 'left', detail: `${input.service} did not answer: ${forward.detail}` };
  // Only a seal proves that nothing can land under the key later: an unsealed "not found" leaves the call as it is.
  if (forward.kind === 'not_found' && !forward.sealed)
    return { ...ids, forward, outcome: 'left', detail: `${input.service} found nothing but did not seal the key` };
  if (forward.kind === 'not_found' || forward.status === 'failed')
    return { ...ids, forward, outcome: 'no_effect', detail: 'the downstream holds no effect under the key (sealed)' };
  if (!input.registered)
    return { ...ids, forward, outcome: 'left', detail: 'the effect stands; the run registered no compensation for it' };
  const compensation = await compensate(intent, input.body, input.registered, policy);
  const offset = compensation.outcome === 'OFFSET' || compensation.outcome === 'NOTHING_TO_OFFSET';
  return {
    ...ids,
    forward,
    compensation,
    outcome: offset ? 'offset' : 'left',
    detail: offset ? `offset by ${compensation.toolName}` : `the compensation did not settle: ${compensation.detail}`,
  };
}

/** The compensation the run registered, rebuilt from the tool declaration and checked against the registration. */
async function compensate(
  forward: ToolIntent,
  body: Json,
  registered: NonNullable<SettleAbandonedInput['registered']>,
  policy: HeldPolicy,
): Promise<NonNullable<SettleAbandonedResult['compensation']>> {
  const { target, args, cbody, argumentsHash, operationKey, ctx } = rebuildCompensation(forward, body, registered);
  const intent: ToolIntent = {
    ...forward,
    providerCallId: 'saga', // the signer evaluates the policy with origin `compensation`
    logicalCallId: `cmp_${forward.logicalCallId}`,
    operationKey,
    toolName: target.name,
    toolVersion: target.version,
    argumentsHash,
    deadlineAt: new Date(Date.now() + 60_000).toISOString(),
  };
  // Authorized at dispatch as the run's own saga would be: the current policy, origin `compensation`.
  const request: DispatchRequest = {
    intent,
    service: target.service,
    route: targetOf(target),
    body: cbody,
    strategy: 'check_receipt',
    dispatch: 1,
    keyUsed: operationKey,
    authorization: authorizeCompensation(intent, target, args, ctx, policy),
    intentRecordedAt: now(),
    idempotency: target.idempotency,
  };
  return dispatchCompensation(request, target);
}

/**
 * The compensation's tool, arguments, body, hash and key, rebuilt from the forward call's recorded body; refused
 * unless it is the one the run registered.
 */
function rebuildCompensation(
  forward: ToolIntent,
  body: Json,
  registered: NonNullable<SettleAbandonedInput['registered']>,
) {
  const tool = workflowTools.get(forward.toolName);
  const plan = tool?.compensation;
  const target = plan?.kind === 'compensate' ? workflowTools.get(plan.tool) : undefined;
  if (!tool || plan?.kind !== 'compensate' || !target || target.name !== registered.toolName)
    throw refuse(
      ConsoleFailure.EvidenceMismatch,
      `no compensation ${registered.toolName} is declared for ${forward.toolName}`,
    );
  const { tenant: _tenant, ...fields } = isRecord(body) ? body : {};
  const parsed = tool.args.safeParse(fields);
  if (!parsed.success) throw refuse(ConsoleFailure.EvidenceMismatch, `the recorded body is not a ${tool.name} call`);
  const ctx = { tenant: forward.tenant, principalId: forward.principalId };
  const cargs = target.args.safeParse(plan.args({ args: parsed.data, operationKey: forward.operationKey }));
  if (!cargs.success) throw refuse(ConsoleFailure.EvidenceMismatch, `the compensation's arguments do not parse`);
  const cbody = target.canonicalize(cargs.data, ctx);
  const argumentsHash = hashCanonical(cbody);
  const operationKey = deriveOperationKey({
    tenant: forward.tenant,
    runId: forward.runId,
    toolName: target.name,
    toolVersion: target.version,
    argumentsHash,
  });
  if (operationKey !== registered.operationKey || argumentsHash !== registered.argumentsHash)
    throw refuse(ConsoleFailure.EvidenceMismatch, 'the rebuilt compensation is not the one the run registered');
  return { target, args: cargs.data, cbody, argumentsHash, operationKey, ctx };
}

/** Sends the compensation once; no answer is asked about by its own key (sealing it when absent) before concluding. */
async function dispatchCompensation(
  request: DispatchRequest,
  target: AnyTool,
): Promise<NonNullable<SettleAbandonedResult['compensation']>> {
  const out = { toolName: target.name, operationKey: request.keyUsed };
  try {
    const r = await dispatchTool(request);
    if (r.outcome === 'succeeded')
      return { ...out, outcome: 'OFFSET', ...(r.receipt ? { receipt: r.receipt } : {}), detail: 'offset' };
    const absent = (target.forwardAbsentReasons ?? []).includes(r.errorCode ?? '');
    return { ...out, outcome: absent ? 'NOTHING_TO_OFFSET' : 'FAILED', detail: `${r.errorCode ?? 'rejected'}` };
  } catch (err) {
    const found = await lookUp(request.intent, target.service, true);
    const why = ((err as { cause?: { message?: string } }).cause?.message ?? String(err)).slice(0, 200);
    if (found.kind === 'found' && found.status === 'completed')
      return {
        ...out,
        outcome: 'OFFSET',
        ...(found.receipt ? { receipt: found.receipt } : {}),
        detail: 'found by key',
      };
    if (found.kind === 'unreachable') return { ...out, outcome: 'UNKNOWN', detail: `${why}; lookup: ${found.detail}` };
    return { ...out, outcome: 'FAILED', detail: `${why}; nothing committed under the key (sealed)` };
  }
}
