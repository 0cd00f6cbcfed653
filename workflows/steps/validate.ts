/**
 * Step 2 of a turn, `validate`: a proposal is untrusted input. In the essay's order: (0) the per-turn cap,
 * (1) size limits, (2) known tool and version, and the tool's schema, before anything is keyed; then, once
 * `key` has bound the canonical arguments, (4) tenant and resource binding and (5) the tool's business
 * invariants. Steps (6) authorization and approval, (7) unresolved-call state and (8) the dispatch budget are
 * `decide`'s, at the instant of dispatch. Every rejection is typed and recorded; none reaches a downstream system.
 */
import { sha256Hex } from '../../src/domain/canonical';
import type { ProposedCall } from '../../src/domain/activity-contracts';
import { Failure } from '../../src/domain/failures';
import { MAX_JSON_DEPTH, textDepth } from '../../src/domain/json-depth';
import { deriveLogicalCallId } from '../../src/domain/operation-key';
import type { AnyTool } from '../../src/domain/tool';
import type { Refused, RunModel, ValidatedCall } from '../model';

/** Argument text larger than this is rejected before any parsing, whatever the tool. */
export const MAX_PROPOSAL_BYTES = 65_536;

export type Prepared = { readonly ok: true; readonly call: ValidatedCall } | Refused;

/** One proposal on its way through validate and key: how it is named, recorded and refused. */
export class ProposalRecord {
  constructor(
    readonly run: RunModel,
    readonly turn: number,
    readonly proposal: ProposedCall,
    /** Proposals of this turn so far, by tool and hash: the occurrence part of the logical call id. */
    private readonly inTurn: Map<string, number>,
  ) {}

  /** The logical call id for these arguments (their canonical hash, or the raw text's before canonicalization). */
  callId(hash: string): string {
    const slot = `${this.proposal.name}|${hash}`;
    const n = this.inTurn.get(slot) ?? 0;
    this.inTurn.set(slot, n + 1);
    return deriveLogicalCallId({
      runId: this.run.runId,
      turn: this.turn,
      toolName: this.proposal.name,
      argumentsHash: hash,
      occurrenceInTurn: n,
    });
  }

  /** Record that the model proposed this call, under `logicalCallId`. */
  recordProposed(logicalCallId: string, toolName: string): void {
    this.run.ledger.append({
      type: 'ToolProposalRecorded',
      turn: this.turn,
      logicalCallId,
      providerCallId: this.proposal.providerCallId,
      toolName,
      origin: 'model',
    });
  }

  /** Refuse a proposal already recorded under `logicalCallId`. */
  reject(logicalCallId: string, code: string, message: string): Refused {
    this.run.ledger.append({ type: 'ProposalRejected', logicalCallId, code, message });
    return {
      ok: false,
      observation: {
        logicalCallId,
        providerCallId: this.proposal.providerCallId,
        toolName: this.proposal.name,
        state: 'FAILED',
        error: { code, message },
      },
    };
  }

  /** Refuse a proposal before it has a canonical form: it is recorded under the raw text's hash. */
  refuse(code: string, message: string): Refused {
    const logicalCallId = this.callId(sha256Hex(this.proposal.argumentsJson));
    this.recordProposed(logicalCallId, this.proposal.name);
    return this.reject(logicalCallId, code, message);
  }
}

/** A proposal whose shape passed: a known tool, arguments within the size limit that match its schema. */
export type Shaped = { readonly ok: true; readonly tool: AnyTool; readonly args: unknown } | Refused;

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

/** Steps 0-2: the per-turn cap, the size and depth limits, a known tool, and the tool's schema. */
export function validate(p: ProposalRecord, overTurnCap?: number): Shaped {
  const { proposal, run } = p;
  const tool = run.tools.get(proposal.name);
  const limit = tool?.maxArgumentBytes ?? MAX_PROPOSAL_BYTES;
  // 0. the per-turn cap on proposals: what a turn proposes past it is never considered
  if (overTurnCap !== undefined)
    return p.refuse(Failure.BudgetProposalsPerTurn, `more than ${overTurnCap} proposals in one turn`);
  // 1. size limits, 2. known tool and version
  if (utf8Bytes(proposal.argumentsJson) > limit)
    return p.refuse(Failure.ProposalTooLarge, `arguments exceed ${limit} bytes`);
  // before anything parses or walks them: every walk over the arguments recurses, and depth is how it overflows
  if (textDepth(proposal.argumentsJson) > MAX_JSON_DEPTH)
    return p.refuse(Failure.ProposalTooDeep, `arguments nest deeper than ${MAX_JSON_DEPTH} levels`);
  if (tool === undefined)
    return p.refuse(
      Failure.ProposalUnknownTool,
      `unknown tool "${proposal.name}"; known: ${run.tools.names().join(', ')}`,
    );
  // schema
  let parsed: unknown;
  try {
    parsed = JSON.parse(proposal.argumentsJson);
  } catch (err) {
    return p.refuse(Failure.ProposalMalformed, `arguments are not valid JSON: ${(err as Error).message}`);
  }
  const checked = tool.args.safeParse(parsed);
  if (!checked.success) {
    const issues = checked.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    return p.refuse(Failure.ProposalSchemaViolation, `arguments violate the ${tool.name} schema: ${issues}`);
  }
  return { ok: true, tool, args: checked.data };
}

/**
 * Steps 4-5, on a keyed call: a principal of one tenant never names another tenant's resource, and the tool's
 * business invariants hold.
 */
export function validateBinding(p: ProposalRecord, call: ValidatedCall): Prepared {
  const { who } = p.run;
  // 4. tenant and resource binding
  const authz = call.tool.authorization(call.args, who);
  if (authz.resourceTenant !== who.tenant) {
    return p.reject(
      call.logicalCallId,
      Failure.TenantMismatch,
      `resource ${authz.resource} is not in tenant ${who.tenant}`,
    );
  }
  // 5. business invariants declared by the tool
  const broken = call.tool.invariants?.(call.args, who) ?? null;
  if (broken !== null) return p.reject(call.logicalCallId, Failure.ProposalInvariant, broken);
  return { ok: true, call };
}
