/**
 * The key-reuse probe: after the run, resend the run's first dispatch under the SAME operation key with OTHER
 * arguments, straight through the DownstreamClient, carrying a capability that is valid for exactly that request
 * (the runner holds the case's capability key). The workflow cannot produce this request: its operation key is
 * derived from the canonical arguments hash, so other arguments always get another key. The probe plays a buggy
 * or hostile caller, and shows that the downstream's own idempotency record refuses it, not the capability check.
 *
 * The original request is read from the durable record: the dispatchTool activity's input in the history.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { hashCanonical, type Json } from '../../src/domain/canonical';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import { signCapability } from '../../src/capability/capability';
import { builtinTools } from '../../src/tools/registry';
import { fenceFor } from '../../activities/dispatch.activities';
import type { CaseServices, Lab, ServerLink } from './lab';
import type { Probe } from './protocol-format';

export interface ProbeResult {
  /** The downstream's error code, `ok` or `replayed`, or the transport outcome. */
  readonly outcome: string;
  readonly operationKey: string;
  readonly text: string;
}

/** The first dispatchTool request of the run, decoded from its ActivityTaskScheduled event. */
export async function firstDispatchRequest(
  link: ServerLink,
  handle: WorkflowHandle,
): Promise<DispatchRequest | undefined> {
  const history = await handle.fetchHistory();
  for (const e of history.events ?? []) {
    const s = e.activityTaskScheduledEventAttributes;
    if (s?.activityType?.name !== 'dispatchTool') continue;
    return decodeFromPayloadsAtIndex<DispatchRequest>(link.client.options.loadedDataConverter, 0, s.input?.payloads);
  }
  return undefined;
}

export async function runProbe(
  lab: Lab,
  link: ServerLink,
  handle: WorkflowHandle,
  services: CaseServices,
  probe: Probe,
): Promise<ProbeResult> {
  const req = await firstDispatchRequest(link, handle);
  if (!req)
    return {
      outcome: 'no_dispatch',
      operationKey: '',
      text: 'the run dispatched nothing, so there is no key to reuse',
    };
  const tool = builtinTools.get(req.intent.toolName);
  const svc = services.byName.get(req.service as never);
  if (!tool || !svc)
    return { outcome: 'no_service', operationKey: req.intent.operationKey, text: `no ${req.service} in this case` };
  const body = { ...(req.body as Record<string, Json>), ...(probe.changes as Record<string, Json>) } as Json;
  const argumentsHash = hashCanonical(body);
  let authz: { action: string; resource: string };
  try {
    authz = tool.authorization(body, { tenant: req.intent.tenant, principalId: req.intent.principalId });
  } catch {
    authz = { action: tool.effectScope, resource: `${req.intent.tenant}/probe` };
  }
  const { token: capability } = signCapability(
    {
      operationKey: req.intent.operationKey,
      keyMode: 'exact',
      argumentsHash,
      tenant: req.intent.tenant,
      principalId: req.intent.principalId,
      scope: tool.effectScope,
      action: authz.action,
      resource: authz.resource,
      policyVersion: req.intent.policyVersion,
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    },
    lab.capabilityTrust.dispatch,
    { audience: req.service, nowMs: Date.now() },
  );
  // A fence above any attempt's (fences are ownership epochs: the schedule time of the attempt), so only the
  // arguments can be the reason for a refusal.
  const sent = await svc.client.send(req.route, body, {
    key: req.intent.operationKey,
    argumentsHash,
    fence: fenceFor(Date.now() + 60_000, 1),
    // The intent's own recorded time (a lab run is well inside the retention window).
    intentAt: req.intentRecordedAt ?? new Date().toISOString(),
    capability,
  });
  const outcome =
    sent.kind === 'ok' ? (sent.replayed ? 'replayed' : 'ok') : sent.kind === 'rejected' ? sent.code : sent.kind;
  return {
    outcome,
    operationKey: req.intent.operationKey,
    text: `resent ${req.route} under ${req.intent.operationKey.slice(0, 14)}… with ${JSON.stringify(probe.changes)} and a valid capability: ${outcome}`,
  };
}
