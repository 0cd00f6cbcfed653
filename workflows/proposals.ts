/**
 * The proposal pipeline, run in workflow code in the essay's order: (1) size limits and schema, (2) known tool
 * and version, (3) canonical arguments and the keys bound to them, (4) tenant and resource binding, (5) business
 * invariants. Steps (6) authorization and approval, (7) unresolved-call state and (8) dispatch budget happen at
 * dispatch time in the call runner. Every rejection is typed and recorded; none reaches a downstream system.
 */
import { patched } from '@temporalio/workflow';
import { canonicalJson, hashCanonical, sha256Hex, type Json } from '../src/domain/canonical';
import type { Observation, ProposedCall } from '../src/domain/activity-contracts';
import { Failure } from '../src/domain/failures';
import { deriveLogicalCallId, deriveOperationKey } from '../src/domain/identity';
import type { CallOrigin } from '../src/domain/ledger-events';
import type { AnyTool } from '../src/domain/tool';
import type { ToolRegistry } from '../src/tools/registry';
import type { Ledger } from './ledger';

/** Patch id: the operation key names the intent (no occurrence counter), so a re-proposal is the same intent. */
export const INTENT_KEY = 'intent-key';

/** Argument text larger than this is rejected before any parsing, whatever the tool. */
export const MAX_PROPOSAL_BYTES = 65_536;

export interface RunContext {
  readonly runId: string;
  readonly principalId: string;
  readonly tenant: string;
  readonly deadlineAt: string;
  readonly tools: ToolRegistry;
  readonly ledger: Ledger;
  /** Intents already recorded in this run, by tool and arguments hash: the occurrence part of the key. */
  readonly occurrences: Map<string, number>;
}

/** A proposal that passed validation steps 1-5: authorization (6-8) happens at dispatch, in the call runner. */
export interface ValidatedCall {
  readonly tool: AnyTool;
  readonly args: unknown;
  readonly body: Json;
  readonly logicalCallId: string;
  readonly providerCallId: string;
  readonly operationKey: string;
  readonly argumentsHash: string;
  readonly origin: CallOrigin;
}

export type Prepared =
  { readonly ok: true; readonly call: ValidatedCall } | { readonly ok: false; readonly observation: Observation };

function utf8Bytes(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** Validate, canonicalize and key one proposal of `turn`. */
export function prepareProposal(
  ctx: RunContext,
  turn: number,
  proposal: ProposedCall,
  occurrenceInTurn: Map<string, number>,
  overTurnCap?: number,
): Prepared {
  const { ledger } = ctx;
  const tool = ctx.tools.get(proposal.name);
  const limit = tool?.maxArgumentBytes ?? MAX_PROPOSAL_BYTES;
  const rawHash = sha256Hex(proposal.argumentsJson);

  const provisional = (hash: string): string => {
    const slot = `${proposal.name}|${hash}`;
    const n = occurrenceInTurn.get(slot) ?? 0;
    occurrenceInTurn.set(slot, n + 1);
    return deriveLogicalCallId({
      runId: ctx.runId,
      turn,
      toolName: proposal.name,
      argumentsHash: hash,
      occurrenceInTurn: n,
    });
  };
  const reject = (logicalCallId: string, code: string, message: string): Prepared => {
    ledger.append({ type: 'ProposalRejected', logicalCallId, code, message });
    return {
      ok: false,
      observation: {
        logicalCallId,
        providerCallId: proposal.providerCallId,
        toolName: proposal.name,
        state: 'FAILED',
        error: { code, message },
      },
    };
  };
  const early = (code: string, message: string): Prepared => {
    const logicalCallId = provisional(rawHash);
    ledger.append({
      type: 'ToolProposalRecorded',
      turn,
      logicalCallId,
      providerCallId: proposal.providerCallId,
      toolName: proposal.name,
    });
    return reject(logicalCallId, code, message);
  };

  // 0. the per-turn cap on proposals: what a turn proposes past it is never considered
  if (overTurnCap !== undefined)
    return early(Failure.BudgetProposalsPerTurn, `more than ${overTurnCap} proposals in one turn`);
  // 1. size limits, 2. known tool and version
  if (utf8Bytes(proposal.argumentsJson) > limit)
    return early(Failure.ProposalTooLarge, `arguments exceed ${limit} bytes`);
  if (tool === undefined)
    return early(
      Failure.ProposalUnknownTool,
      `unknown tool "${proposal.name}"; known: ${ctx.tools.names().join(', ')}`,
    );
  // schema
  let parsed: unknown;
  try {
    parsed = JSON.parse(proposal.argumentsJson);
  } catch (err) {
    return early(Failure.ProposalMalformed, `arguments are not valid JSON: ${(err as Error).message}`);
  }
  const checked = tool.args.safeParse(parsed);
  if (!checked.success) {
    const issues = checked.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    return early(Failure.ProposalSchemaViolation, `arguments violate the ${tool.name} schema: ${issues}`);
  }
  // 3. canonical arguments and the keys bound to them
  const who = { tenant: ctx.tenant, principalId: ctx.principalId };
  let body: Json;
  let argumentsHash: string;
  try {
    body = tool.canonicalize(checked.data, who);
    argumentsHash = hashCanonical(body);
    canonicalJson(body);
  } catch (err) {
    return early(Failure.ProposalCanonicalization, (err as Error).message);
  }
  const logicalCallId = provisional(argumentsHash);
  ledger.append({
    type: 'ToolProposalRecorded',
    turn,
    logicalCallId,
    providerCallId: proposal.providerCallId,
    toolName: tool.name,
  });
  const slot = `${tool.name}@${tool.version}|${argumentsHash}`;
  const occurrence = ctx.occurrences.get(slot) ?? 0;
  // The key names the business intent: the same tenant, run, tool and canonical arguments give the same key for
  // the life of the run, so a re-proposal meets the earlier intent instead of making a second effect. Runs
  // recorded before this counted occurrences into the key (asked only where the two differ).
  const keyOccurrence = occurrence > 0 && !patched(INTENT_KEY) ? occurrence : 0;
  const operationKey = deriveOperationKey({
    tenant: ctx.tenant,
    runId: ctx.runId,
    toolName: tool.name,
    toolVersion: tool.version,
    argumentsHash,
    occurrence: keyOccurrence,
  });
  ledger.append({
    type: 'ArgumentsCanonicalized',
    logicalCallId,
    toolVersion: tool.version,
    argumentsHash,
    operationKey,
  });

  // 4. tenant and resource binding: a principal of one tenant never names another tenant's resource
  const authz = tool.authorization(checked.data, who);
  if (authz.resourceTenant !== ctx.tenant) {
    return reject(logicalCallId, Failure.TenantMismatch, `resource ${authz.resource} is not in tenant ${ctx.tenant}`);
  }
  // 5. business invariants declared by the tool
  const broken = tool.invariants?.(checked.data, who) ?? null;
  if (broken !== null) return reject(logicalCallId, Failure.ProposalInvariant, broken);
  ctx.occurrences.set(slot, occurrence + 1);
  return {
    ok: true,
    call: {
      tool,
      args: checked.data,
      body,
      logicalCallId,
      providerCallId: proposal.providerCallId,
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
  for (const c of Object.values(ledger.projection.calls)) {
    if (
      c.operationKey === call.operationKey &&
      c.intentRecorded &&
      c.logicalCallId !== call.logicalCallId &&
      c.origin === 'model'
    )
      return c;
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
