/**
 * The proposal pipeline, run in workflow code in the essay's order: size limits, known tool, parse and schema,
 * canonical arguments, keys, authorization at dispatch. Every rejection is typed and recorded; none reaches a
 * downstream system. Pure and deterministic apart from the ledger appends.
 */
import { canonicalJson, hashCanonical, sha256Hex, type Json } from '../src/domain/canonical';
import type { Observation, ProposedCall } from '../src/domain/activity-contracts';
import { Failure } from '../src/domain/failures';
import { deriveLogicalCallId, deriveOperationKey, type ToolIntent } from '../src/domain/identity';
import { evaluatePolicy, type Policy } from '../src/domain/policy';
import type { AnyTool } from '../src/domain/tool';
import type { ToolRegistry } from '../src/tools/registry';
import type { Ledger } from './ledger';

/** Argument text larger than this is rejected before any parsing, whatever the tool. */
export const MAX_PROPOSAL_BYTES = 65_536;

export interface RunContext {
  readonly runId: string;
  readonly principalId: string;
  readonly tenant: string;
  readonly deadlineAt: string;
  readonly policy: Policy;
  readonly tools: ToolRegistry;
  readonly ledger: Ledger;
  /** Intents already recorded in this run, by tool and arguments hash: the occurrence part of the key. */
  readonly occurrences: Map<string, number>;
}

export interface ReadyCall {
  readonly tool: AnyTool;
  readonly args: unknown;
  readonly body: Json;
  readonly intent: ToolIntent;
}

export type Prepared = { readonly ok: true; readonly call: ReadyCall } | { readonly ok: false; readonly observation: Observation };

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

/** Validate, canonicalize, key and authorize one proposal of `turn`. */
export function prepareProposal(ctx: RunContext, turn: number, proposal: ProposedCall, occurrenceInTurn: Map<string, number>): Prepared {
  const { ledger } = ctx;
  const tool = ctx.tools.get(proposal.name);
  const limit = tool?.maxArgumentBytes ?? MAX_PROPOSAL_BYTES;
  const rawHash = sha256Hex(proposal.argumentsJson);

  const provisional = (hash: string): string => {
    const slot = `${proposal.name}|${hash}`;
    const n = occurrenceInTurn.get(slot) ?? 0;
    occurrenceInTurn.set(slot, n + 1);
    return deriveLogicalCallId({ runId: ctx.runId, turn, toolName: proposal.name, argumentsHash: hash, occurrenceInTurn: n });
  };
  const reject = (logicalCallId: string, code: string, message: string): Prepared => {
    ledger.append({ type: 'ProposalRejected', logicalCallId, code, message });
    return {
      ok: false,
      observation: { logicalCallId, providerCallId: proposal.providerCallId, toolName: proposal.name, state: 'FAILED', error: { code, message } },
    };
  };
  const early = (code: string, message: string): Prepared => {
    const logicalCallId = provisional(rawHash);
    ledger.append({ type: 'ToolProposalRecorded', turn, logicalCallId, providerCallId: proposal.providerCallId, toolName: proposal.name });
    return reject(logicalCallId, code, message);
  };

  // 1. size limits, 2. known tool and version
  if (utf8Bytes(proposal.argumentsJson) > limit) return early(Failure.ProposalTooLarge, `arguments exceed ${limit} bytes`);
  if (tool === undefined) return early(Failure.ProposalUnknownTool, `unknown tool "${proposal.name}"; known: ${ctx.tools.names().join(', ')}`);
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
  ledger.append({ type: 'ToolProposalRecorded', turn, logicalCallId, providerCallId: proposal.providerCallId, toolName: tool.name });
  const slot = `${tool.name}@${tool.version}|${argumentsHash}`;
  const occurrence = ctx.occurrences.get(slot) ?? 0;
  const operationKey = deriveOperationKey({
    tenant: ctx.tenant,
    runId: ctx.runId,
    toolName: tool.name,
    toolVersion: tool.version,
    argumentsHash,
    occurrence,
  });
  ledger.append({ type: 'ArgumentsCanonicalized', logicalCallId, toolVersion: tool.version, argumentsHash, operationKey });

  // 4-6. tenant binding, business invariants, authorization: evaluated now, right before dispatch
  const authz = tool.authorization(checked.data, who);
  const decision = evaluatePolicy(ctx.policy, { principalId: ctx.principalId, tenant: ctx.tenant }, authz, Date.now());
  ledger.append({
    type: decision.allowed ? 'AuthorizationAllowed' : 'AuthorizationDenied',
    logicalCallId,
    principalId: ctx.principalId,
    tenant: ctx.tenant,
    action: authz.action,
    resource: authz.resource,
    argumentsHash,
    policyVersion: decision.policyVersion,
    issuedAt: decision.issuedAt,
    expiresAt: decision.expiresAt,
    reason: decision.reason,
  });
  if (!decision.allowed) {
    return {
      ok: false,
      observation: {
        logicalCallId,
        providerCallId: proposal.providerCallId,
        toolName: tool.name,
        state: 'FAILED',
        error: { code: Failure.AuthorizationDenied, message: decision.reason },
      },
    };
  }

  // The intent becomes durable (workflow state, and the activity input in history) before any dispatch.
  ctx.occurrences.set(slot, occurrence + 1);
  const intent: ToolIntent = {
    runId: ctx.runId,
    providerCallId: proposal.providerCallId,
    logicalCallId,
    operationKey,
    toolName: tool.name,
    toolVersion: tool.version,
    argumentsHash,
    principalId: ctx.principalId,
    tenant: ctx.tenant,
    policyVersion: decision.policyVersion,
    deadlineAt: ctx.deadlineAt,
  };
  ledger.append({ type: 'DispatchIntentRecorded', logicalCallId, intent });
  return { ok: true, call: { tool, args: checked.data, body, intent } };
}
