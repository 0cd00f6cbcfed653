/**
 * Step 3 of a turn, `key`: the arguments become canonical, and the keys are bound to them. The logical call id
 * names this proposal; the operation key names the business intent (tenant, run, tool, canonical arguments), so a
 * re-proposal of the same intent meets the earlier one instead of making a second effect: one intent, one call.
 */
import type { Observation } from '../../src/domain/activity-contracts';
import { hashCanonical, type Json } from '../../src/domain/canonical';
import { Failure } from '../../src/domain/failures';
import { deriveOperationKey } from '../../src/domain/operation-key';
import type { AnyTool } from '../../src/domain/tool';
import type { Ledger } from '../ledger';
import type { Refused, ValidatedCall } from '../model';
import type { ProposalRecord } from './validate';

export type Keyed = { readonly ok: true; readonly call: ValidatedCall } | Refused;

export function key(p: ProposalRecord, tool: AnyTool, args: unknown): Keyed {
  const { run } = p;
  const { who } = run;
  let body: Json;
  let argumentsHash: string;
  try {
    body = tool.canonicalize(args, who);
    argumentsHash = hashCanonical(body);
  } catch (err) {
    return p.refuse(Failure.ProposalCanonicalization, (err as Error).message);
  }
  const logicalCallId = p.callId(argumentsHash);
  p.recordProposed(logicalCallId, tool.name);
  // The key names the business intent: the same tenant, run, tool and canonical arguments give the same key for
  // the life of the run, so a re-proposal meets the earlier intent.
  const operationKey = deriveOperationKey({
    tenant: who.tenant,
    runId: run.runId,
    toolName: tool.name,
    toolVersion: tool.version,
    argumentsHash,
  });
  run.ledger.append({
    type: 'ArgumentsCanonicalized',
    logicalCallId,
    toolVersion: tool.version,
    argumentsHash,
    operationKey,
  });
  return {
    ok: true,
    call: {
      tool,
      args,
      body,
      logicalCallId,
      providerCallId: p.proposal.providerCallId,
      operationKey,
      argumentsHash,
      origin: 'model',
    },
  };
}

/**
 * A proposal whose operation key this run already holds an intent for: the earlier call if it is settled or in
 * flight, else undefined. Compensations are their own intents and never match a model proposal.
 */
export function earlierIntent(
  ledger: Ledger,
  call: ValidatedCall,
):
  | {
      readonly logicalCallId: string;
      readonly state: string;
      readonly receipt: string | null;
      readonly errorCode: string | null;
    }
  | undefined {
  for (const c of ledger.callsWithKey(call.operationKey)) {
    if (c.intentRecorded && c.logicalCallId !== call.logicalCallId && c.origin === 'model') return c;
  }
  return undefined;
}

/** Record that `call` repeats the intent of `sameAs`, and answer it with that call's outcome; nothing is dispatched. */
export function answerRepeat(ledger: Ledger, call: ValidatedCall, sameAs: string, outcome: Observation): Observation {
  const receipt = ledger.projection.calls[sameAs]?.receipt ?? undefined;
  ledger.append({
    type: 'IntentRepeated',
    logicalCallId: call.logicalCallId,
    sameAsCallId: sameAs,
    operationKey: call.operationKey,
    outcome: outcome.state,
    ...(receipt ? { receipt } : {}),
  });
  const base = { logicalCallId: call.logicalCallId, providerCallId: call.providerCallId, toolName: call.tool.name };
  if (outcome.state === 'SUCCEEDED')
    return {
      ...base,
      state: 'SUCCEEDED',
      data: { repeatOf: sameAs, ...(receipt ? { receipt } : {}), note: 'already done in this run: no second effect' },
    };
  const code = outcome.state === 'FAILED' ? 'Intent.Repeated' : (outcome.error?.code ?? Failure.UnresolvedCall);
  const why =
    outcome.state === 'FAILED'
      ? `the same intent already failed in ${sameAs}; a deliberate new attempt needs other arguments`
      : `the same intent ${sameAs} is unresolved`;
  return { ...base, state: outcome.state, error: { code, message: why } };
}
