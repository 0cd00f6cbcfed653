/**
 * `ledgerloop approve` and `ledgerloop deny`: a human decision on one call waiting for approval. The command reads
 * the pending approval (pendingApprovalsQuery) for the arguments hash and policy version the decision must name,
 * shows them, and executes decideApprovalUpdate; a validator refusal prints the validator's message.
 */
import type { Command } from 'commander';
import {
  decideApprovalUpdate,
  pendingApprovalsQuery,
  type ApprovalDecisionInput,
  type PendingApproval,
} from '../../workflows/definitions';
import { withSession, type ConnectionFlags } from '../connect';
import { CallNotFoundError } from '../errors';
import { parseDuration, parseNonEmpty } from '../parse';
import { actorToken, callCommand, finishCallCommand, guardCommandToken, tokenForCommand } from './call-command';
import { describeRun } from './read-run';
import { arg, printJson, runAction, type CommandIO } from './shared';

interface DecideFlags extends ConnectionFlags {
  readonly as?: string;
  readonly token?: string;
  /** `--allow-token-in-clear`: send the token even without codec keys. */
  readonly allowTokenInClear?: boolean;
  readonly reason?: string;
  readonly ttl?: number;
  readonly argumentsHash?: string;
  readonly policyVersion?: string;
  readonly json: boolean;
  readonly timeout: number;
}

type Decision = ApprovalDecisionInput['decision'];

/** The decision the update carries: the pending call's hash and policy unless pinned by flags. */
export function decisionInput(
  p: PendingApproval,
  decision: Decision,
  flags: DecideFlags,
  token: string,
): ApprovalDecisionInput {
  return {
    logicalCallId: p.logicalCallId,
    argumentsHash: flags.argumentsHash ?? p.argumentsHash,
    policyVersion: flags.policyVersion ?? p.policyVersion,
    token,
    decision,
    ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
    ...(decision === 'approve' && flags.ttl !== undefined ? { ttlMs: flags.ttl } : {}),
  };
}

function pendingText(p: PendingApproval): string {
  return [
    `call            ${p.logicalCallId} (${p.toolName})`,
    `summary         ${p.summary}`,
    `arguments hash  ${p.argumentsHash}`,
    `policy version  ${p.policyVersion}`,
    `requested       ${p.requestedAt}: ${p.reason}`,
    '',
  ].join('\n');
}

function register(program: Command, io: CommandIO, decision: Decision): void {
  const verb = decision === 'approve' ? 'approve' : 'deny';
  const cmd = callCommand(program, {
    name: verb,
    description:
      decision === 'approve'
        ? 'approve one call waiting for approval (bound to its arguments hash and policy version)'
        : 'deny one call waiting for approval; the denial becomes the call’s result',
    call: 'the call, e.g. lc_2_3f9a0c1b2d4e',
    as: 'who decides, e.g. manager:carol (recorded in the ledger)',
  });
  if (decision === 'approve') {
    cmd
      .option(
        '--ttl <duration>',
        'how long the approval stays valid (default: the policy’s)',
        arg((v) => parseDuration(v, '--ttl')),
      )
      .option(
        '--reason <text>',
        'a note kept with the approval',
        arg((v) => parseNonEmpty(v, '--reason')),
      );
  } else {
    cmd.requiredOption(
      '--reason <text>',
      'why (recorded in the ledger and shown to the model)',
      arg((v) => parseNonEmpty(v, '--reason')),
    );
  }
  cmd
    .option(
      '--arguments-hash <sha256>',
      'pin the arguments hash you reviewed; the workflow refuses the decision if the call names another',
    )
    .option('--policy-version <v>', 'pin the policy version you reviewed; refused if the call waits under another')
    .option('--json', 'print JSON: the pending call and the outcome', false);
  finishCallCommand(cmd, io);
  cmd.action((workflowId: string, logicalCallId: string, flags: DecideFlags) =>
    runAction(cmd, io, async () => {
      // A token to approve (or deny) exactly this call of this run (src/identity/purpose.ts).
      const scope = { purpose: 'approve', run: workflowId, call: logicalCallId } as const;
      const token = await tokenForCommand(actorToken(flags.token), scope);
      return withSession({ ...flags, actorToken: token }, workflowId, async (s) => {
        await guardCommandToken(s.dataConverter, 'the approver’s token', io.err, flags.allowTokenInClear);
        const { handle, description } = await describeRun(s, workflowId);
        const tq = description.taskQueue;
        const pending = await s.answered(
          'pendingApprovals query',
          workflowId,
          flags.timeout,
          () => handle.query(pendingApprovalsQuery),
          tq,
        );
        const p = pending.find((x) => x.logicalCallId === logicalCallId);
        if (!p) {
          const waiting = pending.map((x) => x.logicalCallId);
          throw new CallNotFoundError(
            `call ${logicalCallId} is not waiting for approval in ${workflowId} (${waiting.length ? `waiting: ${waiting.join(', ')}` : 'no call is waiting'})`,
          );
        }
        if (!flags.json) io.out(pendingText(p));
        const input = decisionInput(p, decision, flags, token);
        const outcome = await s.answered(
          'decideApproval update',
          workflowId,
          flags.timeout,
          () => handle.executeUpdate(decideApprovalUpdate, { args: [input] }),
          tq,
        );
        if (flags.json) {
          printJson(io, { workflowId, pending: p, decision: { ...input, token: '(redacted)' }, outcome });
        } else if (decision === 'approve') {
          io.out(
            `approved ${logicalCallId} as ${outcome.approver ?? '?'}${outcome.expiresAt ? `; the approval expires at ${outcome.expiresAt}` : ''}\n`,
          );
        } else {
          io.out(`denied ${logicalCallId} as ${outcome.approver ?? '?'}: ${flags.reason}\n`);
        }
        return 0;
      });
    }),
  );
}

export function registerDecide(program: Command, io: CommandIO): void {
  register(program, io, 'approve');
  register(program, io, 'deny');
}
