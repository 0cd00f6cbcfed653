/**
 * The actions a person takes in the console, each under their verified identity: the run's own updates
 * (`decideApproval`, `resolveCall`, `requestCancel`), which verify the token and record who and why in the ledger,
 * and the console action workflows for what no live run can do (`lookUpCall`, `settleAbandoned`). The console
 * checks the input's shape and that the run is of the person's tenant; everything else is the run's to decide,
 * and its typed refusal is what the person sees.
 */
import { z } from 'zod';
import type { ToolIntent } from '../src/domain/operation-key';
import type { LedgerEvent } from '../src/domain/ledger-events';
import type { LookUpCallResult, SettleAbandonedResult } from '../workflows/console-actions.workflow';
import { decideApprovalUpdate, ledgerQuery, requestCancelUpdate, resolveCallUpdate } from '../workflows/definitions';
import { closedRunEvidence, closedWithoutSettling, forgetSettlement, settlementId } from './abandoned';
import type { ConsoleDeps } from './config';
import { isRunOfTenant } from './ledgerloop-runs';
import { ConsoleRefusal, refusal, refusalOf, type Refusal } from './refusal';
import type { Session } from './session';
import { standingEffects } from './standing-effects';
import { asPerson } from './temporal';
import { ActTokenError, tokenForAct } from '../src/identity/act-token';
import type { TokenScope } from '../src/identity/purpose';

export type ActionName = 'approve' | 'deny' | 'resolve' | 'cancel' | 'lookup' | 'settle';
export type ActionOutcome = { readonly ok: true; readonly message: string; readonly result?: unknown } | Refusal;

const Id = z.string().min(1).max(200);
const Reason = z.string().trim().min(1, 'give a reason').max(2_000);
const Hash = z.string().regex(/^[0-9a-f]{64}$/);
const Inputs = {
  approve: z.object({
    logicalCallId: Id,
    argumentsHash: Hash,
    policyVersion: Id,
    reason: Reason,
    ttlMs: z.number().int().positive(),
  }),
  deny: z.object({ logicalCallId: Id, argumentsHash: Hash, policyVersion: Id, reason: Reason }),
  resolve: z.object({
    logicalCallId: Id,
    outcome: z.enum(['SUCCEEDED', 'FAILED']),
    receipt: Id.optional(),
    reason: Reason,
  }),
  cancel: z.object({ reason: Reason }),
  lookup: z.object({ runId: Id.optional(), logicalCallId: Id }),
  settle: z.object({ runId: Id, logicalCallId: Id, reason: Reason }),
} as const;

/** How long an action may wait on the run or its workflow (the lookups inside take up to about 31 s). */
const ACTION_DEADLINE_MS = 60_000;

export async function runAction(
  deps: ConsoleDeps,
  session: Session,
  workflowId: string,
  name: ActionName,
  raw: unknown,
): Promise<ActionOutcome> {
  const parsed = Inputs[name].safeParse(raw);
  if (!parsed.success)
    return refusal(
      400,
      ConsoleRefusal.InputInvalid,
      parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; '),
    );
  const input = parsed.data as Record<string, unknown>;
  const runId = typeof input.runId === 'string' ? input.runId : undefined;
  const { client } = deps.temporal;
  const as = <T>(fn: () => Promise<T>, ms = ACTION_DEADLINE_MS): Promise<T> =>
    asPerson(deps.temporal, session.token, fn, ms);
  try {
    const handle = client.workflow.getHandle(workflowId, runId);
    const d = await as(() => handle.describe(), 10_000);
    if (!isRunOfTenant(d, session.person.tenant))
      return refusal(
        404,
        ConsoleRefusal.NotInTenant,
        `run ${workflowId} is not a run of tenant ${session.person.tenant}`,
      );
    const token = session.token;
    // Each act is sent with a token for exactly it (src/identity/purpose.ts), minted from the session's.
    const tokenFor = (scope: TokenScope): Promise<string> =>
      (deps.actTokens ?? ((t, sc) => tokenForAct(t, sc).then((r) => r.token)))(token, scope);
    const onCall = (purpose: 'approve' | 'resolve', call: string) => tokenFor({ purpose, run: workflowId, call });
    switch (name) {
      case 'approve':
      case 'deny': {
        const i = input as z.infer<typeof Inputs.approve> | z.infer<typeof Inputs.deny>;
        const act = await onCall('approve', i.logicalCallId);
        const out = await as(() =>
          handle.executeUpdate(decideApprovalUpdate, { args: [{ ...i, token: act, decision: name }] }),
        );
        return name === 'approve'
          ? {
              ok: true,
              message: `approved ${i.logicalCallId} as ${out.approver ?? '?'}; valid until ${out.expiresAt ?? '?'}`,
            }
          : { ok: true, message: `denied ${i.logicalCallId} as ${out.approver ?? '?'}` };
      }
      case 'resolve': {
        const i = input as z.infer<typeof Inputs.resolve>;
        const act = await onCall('resolve', i.logicalCallId);
        const out = await as(() => handle.executeUpdate(resolveCallUpdate, { args: [{ ...i, token: act }] }));
        return {
          ok: true,
          message: `${i.logicalCallId} resolved ${i.outcome} by ${out.operator ?? '?'}, confirmed by the downstream`,
        };
      }
      case 'cancel': {
        const i = input as z.infer<typeof Inputs.cancel>;
        const act = await tokenFor({ purpose: 'cancel', run: workflowId });
        await as(() => handle.executeUpdate(requestCancelUpdate, { args: [{ token: act, reason: i.reason }] }));
        return { ok: true, message: `cancel requested for ${workflowId}` };
      }
      case 'lookup': {
        const i = input as z.infer<typeof Inputs.lookup>;
        const call = await intentFor(deps, session, workflowId, d.runId, i.logicalCallId);
        if (!call)
          return refusal(404, ConsoleRefusal.InputInvalid, `call ${i.logicalCallId} has no recorded intent to look up`);
        const act = await tokenFor({ purpose: 'resolve', run: call.intent.runId, call: call.intent.logicalCallId });
        const result = (await as(() =>
          client.workflow.execute('lookUpCall', {
            taskQueue: d.taskQueue,
            workflowId: `ledgerloop-lookup:${d.runId}:${i.logicalCallId}:${Date.now().toString(36)}`,
            args: [
              {
                token: act,
                intent: call.intent,
                service: call.service,
              },
            ],
          }),
        )) as LookUpCallResult;
        return { ok: true, message: lookupSentence(result), result };
      }
      case 'settle': {
        const i = input as z.infer<typeof Inputs.settle>;
        if (!closedWithoutSettling(d.status.name))
          return refusal(
            409,
            ConsoleRefusal.InputInvalid,
            `run ${workflowId} is ${d.status.name}: only a run closed without settling is settled here`,
          );
        const evidence = await closedRunEvidence(deps, token, workflowId, d.runId);
        const effect = standingEffects(evidence, deps.tools).find((e) => e.intent.logicalCallId === i.logicalCallId);
        if (!effect)
          return refusal(
            404,
            ConsoleRefusal.InputInvalid,
            `call ${i.logicalCallId} left no effect standing in this run`,
          );
        const ledger = await as(() => handle.query(ledgerQuery), 15_000);
        const registered = registrationOf(ledger.events, i.logicalCallId);
        const act = await tokenFor({ purpose: 'resolve', run: effect.intent.runId, call: effect.intent.logicalCallId });
        const result = (await as(() =>
          client.workflow.execute('settleAbandoned', {
            taskQueue: d.taskQueue,
            workflowId: settlementId(d.runId, i.logicalCallId),
            args: [
              {
                token: act,
                reason: i.reason,
                run: { workflowId, runId: d.runId },
                intent: effect.intent,
                service: effect.service,
                body: effect.body,
                ...(registered ? { registered } : {}),
              },
            ],
          }),
        )) as SettleAbandonedResult;
        forgetSettlement(d.runId, i.logicalCallId);
        return { ok: true, message: `${result.outcome}: ${result.detail}`, result };
      }
    }
  } catch (err) {
    if (err instanceof ActTokenError) return refusal(403, ConsoleRefusal.ActTokenUnavailable, err.message);
    return refusalOf(err);
  }
}

function registrationOf(events: readonly LedgerEvent[], forwardCallId: string) {
  const e = events.find((x) => x.type === 'CompensationRegistered' && x.forwardCallId === forwardCallId);
  return e?.type === 'CompensationRegistered'
    ? { operationKey: e.operationKey, argumentsHash: e.argumentsHash, toolName: e.toolName }
    : undefined;
}

/** The intent a call recorded (ledger first; the raw history for a run no worker can replay). */
async function intentFor(
  deps: ConsoleDeps,
  session: Session,
  workflowId: string,
  runId: string,
  id: string,
): Promise<{ intent: ToolIntent; service: string } | undefined> {
  const handle = deps.temporal.client.workflow.getHandle(workflowId, runId);
  try {
    const ledger = await asPerson(deps.temporal, session.token, () => handle.query(ledgerQuery));
    const e = ledger.events.find((x) => x.type === 'DispatchIntentRecorded' && x.logicalCallId === id);
    const service =
      ledger.projection.calls[id]?.service ?? deps.tools.get(ledger.projection.calls[id]?.toolName ?? '')?.service;
    if (e?.type === 'DispatchIntentRecorded' && service) return { intent: e.intent, service };
  } catch {
    // fall through to the history
  }
  const evidence = await closedRunEvidence(deps, session.token, workflowId, runId, false);
  const a = evidence.activities.find(
    (x) =>
      x.activityType === 'dispatchTool' &&
      (x.input as { intent?: ToolIntent } | undefined)?.intent?.logicalCallId === id,
  );
  const input = a?.input as { intent: ToolIntent; service: string } | undefined;
  return input ? { intent: input.intent, service: input.service } : undefined;
}

export function lookupSentence(r: LookUpCallResult): string {
  const a = r.answer;
  const where = `${r.service} under ${r.operationKey}`;
  if (a.kind === 'unreachable') return `${r.service} did not answer (${a.detail})`;
  if (a.kind === 'not_found')
    return `${where}: no record${a.sealed ? ' (the key is sealed: nothing can commit under it)' : ''}`;
  return a.status === 'completed'
    ? `${where}: the effect exists, receipt ${a.receipt ?? '(none)'}`
    : `${where}: a retained refusal (${a.errorCode ?? 'no code'}), no effect`;
}
