/**
 * The authorizer: reads the CURRENT policy for a run to hold (`readPolicy`: the document and its digest; never a
 * signed capability, since its result is recorded in workflow history). The workflow evaluates the policy it
 * holds itself, at workflow time.
 *
 * The signer (`signAtDispatch`, called by the dispatch activity for every attempt) signs nothing it was merely
 * handed: it re-derives the call from the request body and the tool declaration, checks that the workflow's
 * decision names exactly that call, re-evaluates the current policy (which must still be the one the decision
 * was made under), and only then signs an Ed25519 capability for one attempt against one service.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { DispatchRequest } from '../src/domain/activity-contracts';
import { hashCanonical } from '../src/domain/canonical';
import { LOOKUP_ARGUMENTS_HASH, lookupCapabilityScope } from '../src/downstream/protocol';
import { Failure } from '../src/domain/failures';
import { keyModeFor } from '../src/domain/retry-strategies';
import { targetOf } from '../src/domain/transport';
import type { AnyTool, AuthorizationRequest, DispatchContext } from '../src/domain/tool';
import { authorizationInput, type ApprovalGrant, type HeldPolicy } from '../src/domain/authorization';
import {
  CapabilityError,
  lapsesBeforeSend,
  signCapability,
  type CapabilityClaims,
  type CapabilityRecord,
} from '../src/capability/capability';
import type { CapabilitySigningKey } from '../src/capability/capability-keys';
import { evaluate } from '../src/policy/evaluate';
import type { Policy } from '../src/domain/policy-format';
import { policyDigest, PolicyFileError, StaticPolicyStore, type PolicyStore } from '../src/stores/policy-store';
import { builtinTools, type ToolRegistry } from '../src/tools/registry';

export interface AuthorizeDeps {
  readonly policies: PolicyStore;
  /**
   * The dispatch side's Ed25519 signing key (LEDGERLOOP_CAPABILITY_SIGNING_KEY). Only workers hold it; services
   * hold its public key. Without it no capability is signed (a verifying downstream then refuses the call).
   */
  readonly capabilityKey?: CapabilitySigningKey;
  /** Tool declarations the signer re-derives calls from; default the built-in registry (the workflow's). */
  readonly tools?: ToolRegistry;
}

/** The worker's policy store and signing key, with the defaults: the built-in policy, no signing key. */
export function resolveAuthorizeDeps(partial: Partial<AuthorizeDeps> | undefined): AuthorizeDeps {
  return {
    policies: partial?.policies ?? new StaticPolicyStore(),
    ...(partial?.capabilityKey ? { capabilityKey: partial.capabilityKey } : {}),
    ...(partial?.tools ? { tools: partial.tools } : {}),
  };
}

function currentPolicy(store: PolicyStore): Policy {
  try {
    return store.current();
  } catch (err) {
    if (err instanceof PolicyFileError) throw ApplicationFailure.nonRetryable(err.message, err.name);
    throw err;
  }
}

function mismatch(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `the signer refused: ${message}; nothing sent`,
    Failure.CapabilityClaimsMismatch,
  );
}

/** A call as the signer derives it from the request body and the tool declaration alone. */
interface DerivedCall {
  readonly tool: AnyTool;
  readonly args: unknown;
  readonly ctx: DispatchContext;
  readonly request: AuthorizationRequest;
  readonly claims: Omit<CapabilityClaims, 'v' | 'policyVersion' | 'expiresAt'>;
}

function deriveCall(tools: ToolRegistry, req: DispatchRequest): DerivedCall {
  const { intent } = req;
  const tool = tools.get(intent.toolName);
  if (tool === undefined) throw mismatch(`no tool ${intent.toolName} is declared`);
  const target = targetOf(tool);
  if (tool.service !== req.service || target !== req.route)
    throw mismatch(`${tool.name} is sent to ${tool.service} ${target}, not ${req.service} ${req.route}`);
  const body = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw mismatch('the request body is not an object');
  const argumentsHash = hashCanonical(body);
  if (argumentsHash !== intent.argumentsHash)
    throw mismatch('the request body does not hash to the intent arguments hash');
  const { tenant, ...rest } = body as Record<string, unknown>;
  if (typeof tenant !== 'string' || tenant !== intent.tenant)
    throw mismatch('the request body names another tenant than the intent');
  const parsed = tool.args.safeParse(rest);
  if (!parsed.success) throw mismatch(`the request body is not a valid ${tool.name} call`);
  const ctx: DispatchContext = { tenant, principalId: intent.principalId };
  // The body must be exactly what the declaration would send for these arguments.
  if (hashCanonical(tool.canonicalize(parsed.data, ctx)) !== argumentsHash)
    throw mismatch(`the request body is not the canonical form of a ${tool.name} call`);
  const invalid = tool.invariants?.(parsed.data, ctx) ?? null;
  if (invalid !== null) throw mismatch(`the call violates an invariant of ${tool.name}`);
  const keyMode = keyModeFor(req.strategy);
  const keyOk =
    req.keyUsed === intent.operationKey || (keyMode === 'derived' && req.keyUsed.startsWith(`${intent.operationKey}~`));
  if (!keyOk) throw mismatch('the key to send is not the intent operation key');
  const request = tool.authorization(parsed.data, ctx);
  return {
    tool,
    args: parsed.data,
    ctx,
    request,
    claims: {
      operationKey: intent.operationKey,
      keyMode,
      argumentsHash,
      tenant,
      principalId: intent.principalId,
      scope: tool.effectScope,
      action: request.action,
      resource: request.resource,
    },
  };
}

/** What the dispatch activity sends (the token) and what it may record (digest, kid, jti). */
export interface SignedCapability {
  readonly token: string;
  readonly record: CapabilityRecord;
}

/**
 * Sign, at the instant of dispatch, a capability for exactly the call in `req`, only if the current policy is the
 * one the workflow's decision was made under (`Authorization.Stale`) and the decision is still valid
 * (`Authorization.Expired`), both proven no-effect. The call is derived from the body, the tool and the intent
 * (arguments hash, tenant, scope, action, resource, amount), never taken from what the workflow says of it, and the
 * current policy, evaluated again for that call, must allow it; else `Capability.ClaimsMismatch` (nothing sent).
 * Returns undefined when this worker holds no signing key.
 */
export function signAtDispatch(deps: AuthorizeDeps, req: DispatchRequest, nowMs: number): SignedCapability | undefined {
  const current = currentPolicy(deps.policies);
  assertDecisionCurrent(current, req, nowMs);
  const call = deriveCall(deps.tools ?? builtinTools, req);
  if (req.intent.policyVersion !== current.version)
    throw mismatch(`the intent names policy ${req.intent.policyVersion}, not ${current.version}`);
  assertPolicyAllows(current, req, call, nowMs);
  if (!deps.capabilityKey) return undefined;
  const expiresAt = req.authorization.expiresAt;
  try {
    return signCapability({ ...call.claims, policyVersion: current.version, expiresAt }, deps.capabilityKey, {
      audience: req.service,
      nowMs,
      ...(call.request.amountMinor !== undefined ? { amountMinor: call.request.amountMinor } : {}),
      ...(call.request.currency !== undefined ? { currency: call.request.currency } : {}),
    });
  } catch (err) {
    if (err instanceof CapabilityError)
      throw ApplicationFailure.nonRetryable(err.message, Failure.AuthorizationExpired);
    throw err;
  }
}

/** The decision was made under the current policy and is still valid at send time; else a no-effect refusal. */
function assertDecisionCurrent(current: Policy, req: DispatchRequest, nowMs: number): void {
  const auth = req.authorization;
  if (policyDigest(current) !== auth.policyDigest) {
    throw ApplicationFailure.nonRetryable(
      `the policy changed after the decision (${req.intent.policyVersion} -> ${current.version}): decide again`,
      Failure.AuthorizationStale,
    );
  }
  if (lapsesBeforeSend(auth.expiresAt, nowMs)) {
    throw ApplicationFailure.nonRetryable(
      'the decision for this call expired before dispatch',
      Failure.AuthorizationExpired,
    );
  }
}

/**
 * The current policy, evaluated again for exactly this call, allows it; else `Capability.ClaimsMismatch`. The
 * approver the decision names stands for the approval requirement (the workflow verified the approver; the signer
 * checks the requirement is met, not waived). Rate limits are the workflow's (and the tenant quota's) to count; the
 * signer checks what the call is. A compensation is the saga's own call (provider call id `saga`); anything else is
 * the model's.
 */
function assertPolicyAllows(current: Policy, req: DispatchRequest, call: DerivedCall, nowMs: number): void {
  const auth = req.authorization;
  const approval: ApprovalGrant | undefined =
    auth.approvedBy !== undefined
      ? {
          logicalCallId: req.intent.logicalCallId,
          argumentsHash: call.claims.argumentsHash,
          policyVersion: current.version,
          approver: auth.approvedBy,
          grantedAt: auth.expiresAt,
          expiresAt: auth.expiresAt,
        }
      : undefined;
  const input = authorizationInput(
    call.tool,
    call.args,
    call.ctx,
    {
      ...call.claims,
      logicalCallId: req.intent.logicalCallId,
      origin: req.intent.providerCallId === 'saga' ? 'compensation' : 'model',
    },
    { ...(approval ? { approval } : {}), keyMode: call.claims.keyMode, nowMs },
  );
  const decision = evaluate(current, input);
  if (decision.kind === 'denied' || decision.kind === 'approval_required') {
    throw mismatch(`policy ${current.version} does not allow this call (${decision.kind}: ${decision.reason})`);
  }
}

/** How long a lookup or seal capability is valid: one request, sent at once. */
export const LOOKUP_CAPABILITY_TTL_MS = 60_000;

/** The one lookup or seal a reconciliation may make: exactly this key, at this service, for this tenant. */
export interface LookupGrant {
  readonly service: string;
  readonly operationKey: string;
  readonly tenant: string;
  readonly principalId: string;
  readonly policyVersion: string;
  readonly seal: boolean;
}

/**
 * Sign, at the dispatch side, a capability for one lookup (`lookup:<service>`) or seal (`seal:<service>`) of
 * exactly `grant.operationKey` for `grant.tenant`, valid for a minute. The service refuses a lookup or seal for
 * any other key, tenant or service. Returns undefined when this worker holds no signing key (the service then
 * refuses). The only place lookup capabilities are signed.
 */
export function signLookupAtDispatch(deps: AuthorizeDeps, grant: LookupGrant, nowMs: number): string | undefined {
  if (!deps.capabilityKey) return undefined;
  const claims: Omit<CapabilityClaims, 'v'> = {
    operationKey: grant.operationKey,
    keyMode: 'exact',
    argumentsHash: LOOKUP_ARGUMENTS_HASH,
    tenant: grant.tenant,
    principalId: grant.principalId,
    scope: lookupCapabilityScope(grant.service, grant.seal),
    action: grant.seal ? 'seal' : 'lookup',
    resource: `${grant.service}/operations/${grant.operationKey}`,
    policyVersion: grant.policyVersion,
    expiresAt: new Date(nowMs + LOOKUP_CAPABILITY_TTL_MS).toISOString(),
  };
  // A fresh token (its own jti) for every lookup or seal: the service accepts each token once.
  return signCapability(claims, deps.capabilityKey, { audience: grant.service, nowMs, ttlMs: LOOKUP_CAPABILITY_TTL_MS })
    .token;
}

/** The policy as it is now, to hold: the document and its canonical digest. */
export function heldPolicy(store: PolicyStore): HeldPolicy {
  const policy = currentPolicy(store);
  return { document: policy, digest: policyDigest(policy) };
}

export function createAuthorizeActivities(deps: AuthorizeDeps) {
  /** The current policy for a run whose held policy went stale: data only, never a signed capability. */
  async function readPolicy(): Promise<HeldPolicy> {
    return heldPolicy(deps.policies);
  }
  return { readPolicy };
}
