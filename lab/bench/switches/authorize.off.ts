/**
 * Bench switch `authorization`, its worker half (off, in the worker process): stands in for
 * activities/authorize.activities.ts. `signAtDispatch` signs the intent's claims as the bare loop signs its own
 * (the wallet refuses unsigned requests), without the checks that make authorization-at-dispatch: the held policy's
 * digest, the decision's expiry, the call re-derived from the body and the tool, the policy evaluated again.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { DispatchRequest } from '../../../src/domain/activity-contracts';
import { Failure } from '../../../src/domain/failures';
import { keyModeFor } from '../../../src/domain/retry-strategies';
import { signCapability } from '../../../src/capability/capability';
import { builtinTools } from '../../../src/tools/registry';
import type { AuthorizeDeps, SignedCapability } from '../../../activities/authorize.activities';
import type { SwitchMark } from './marks';

export * from '../../../activities/authorize.activities';

const MARK: SwitchMark = 'ledgerloop-bench-switch:authorization';

export function signAtDispatch(deps: AuthorizeDeps, req: DispatchRequest, nowMs: number): SignedCapability | undefined {
  if (!deps.capabilityKey) return undefined;
  const { intent } = req;
  const tool = (deps.tools ?? builtinTools).get(intent.toolName);
  if (tool === undefined)
    throw ApplicationFailure.nonRetryable(`${MARK}: no tool ${intent.toolName}`, Failure.CapabilityClaimsMismatch);
  const { tenant: _tenant, ...args } = req.body as Record<string, unknown>;
  const request = tool.authorization(args as never, { tenant: intent.tenant, principalId: intent.principalId });
  return signCapability(
    {
      operationKey: intent.operationKey,
      keyMode: keyModeFor(req.strategy),
      argumentsHash: intent.argumentsHash,
      tenant: intent.tenant,
      principalId: intent.principalId,
      scope: tool.effectScope,
      action: request.action,
      resource: request.resource,
      policyVersion: intent.policyVersion,
      expiresAt: req.authorization.expiresAt,
    },
    deps.capabilityKey,
    {
      audience: req.service,
      nowMs,
      ...(request.amountMinor !== undefined ? { amountMinor: request.amountMinor } : {}),
      ...(request.currency !== undefined ? { currency: request.currency } : {}),
    },
  );
}
