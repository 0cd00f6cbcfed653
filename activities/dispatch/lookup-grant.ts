/** A lookup of a call's key, with a capability for exactly that key, tenant and service, signed at dispatch. */
import type { ToolIntent } from '../../src/domain/operation-key';
import type { Json } from '../../src/domain/canonical';
import type { AnyTool } from '../../src/domain/tool';
import type { LookupCall } from '../../src/downstream/transport';
import { signLookupAtDispatch, type AuthorizeDeps } from '../authorize.activities';

export function lookupCall(
  signer: AuthorizeDeps,
  call: {
    readonly tool: AnyTool;
    readonly service: string;
    readonly intent: ToolIntent;
    readonly key: string;
    readonly seal: boolean;
    readonly body?: Json;
    readonly signal?: AbortSignal;
  },
): LookupCall {
  const { intent, key, seal } = call;
  const grant = {
    service: call.service,
    operationKey: key,
    tenant: intent.tenant,
    principalId: intent.principalId,
    policyVersion: intent.policyVersion,
    seal,
  };
  const capability = signLookupAtDispatch(signer, grant, Date.now());
  return {
    tool: call.tool,
    intent,
    key,
    seal,
    ...(call.body !== undefined ? { body: call.body } : {}),
    ...(call.signal !== undefined ? { signal: call.signal } : {}),
    ...(capability !== undefined ? { capability } : {}),
  };
}
