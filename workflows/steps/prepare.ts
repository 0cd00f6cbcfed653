/**
 * A proposal becomes a call the run may decide on, or a typed rejection: validate → key → validateBinding, in the
 * essay's order (steps/validate.ts, steps/key.ts). The one path for every host of the call runner: the agent run's
 * planned proposals and a governed session's tool calls alike.
 */
import type { ProposedCall } from '../../src/domain/activity-contracts';
import type { RunModel } from '../model';
import { key } from './key';
import { ProposalRecord, validate, validateBinding, type Prepared } from './validate';

/**
 * Prepare one proposal of `turn`. `inTurn` counts the turn's proposals by tool and hash (the occurrence part of the
 * logical call id); `overCap`, when set, rejects it as past the per-turn cap.
 */
export function prepareProposal(
  run: RunModel,
  turn: number,
  proposal: ProposedCall,
  inTurn: Map<string, number>,
  overCap?: number,
): Prepared {
  const record = new ProposalRecord(run, turn, proposal, inTurn);
  const shaped = validate(record, overCap);
  if (!shaped.ok) return shaped;
  const keyed = key(record, shaped.tool, shaped.args);
  if (!keyed.ok) return keyed;
  return validateBinding(record, keyed.call);
}
