/**
 * `ledgerloop resolve`: an operator settles a call that reconciliation left UNKNOWN (resolveCallUpdate). The
 * resolution is recorded in the ledger with who decided and why; the workflow refuses it for a call that is not
 * UNKNOWN or without who and why.
 */
import type { Command } from 'commander';
import { resolveCallUpdate, type OperatorResolution } from '../../../workflows/definitions';
import { withSession, type ConnectionFlags } from '../connect';
import { CallNotFoundError } from '../errors';
import { parseNonEmpty, parseOutcome } from '../parse';
import { callCommand, finishCallCommand } from './call-command';
import { readRun } from './read-run';
import { arg, printJson, runAction, type CommandIO } from './shared';

interface ResolveFlags extends ConnectionFlags {
  readonly outcome: 'SUCCEEDED' | 'FAILED';
  readonly as: string;
  readonly reason: string;
  readonly receipt?: string;
  readonly json: boolean;
  readonly timeout: number;
}

export function registerResolve(program: Command, io: CommandIO): void {
  const cmd = callCommand(program, {
    name: 'resolve',
    description: 'settle a call left UNKNOWN, with the evidence you used (recorded with who and why)',
    call: 'the UNKNOWN call',
    as: 'who decides, e.g. ops:bob',
  })
    .requiredOption('--outcome <SUCCEEDED|FAILED>', 'what happened downstream', arg(parseOutcome))
    .requiredOption(
      '--reason <text>',
      'the evidence, e.g. "wallet statement shows the debit"',
      arg((v) => parseNonEmpty(v, '--reason')),
    )
    .option(
      '--receipt <id>',
      'the downstream receipt you found (the audit expects one for a SUCCEEDED effect)',
      arg((v) => parseNonEmpty(v, '--receipt')),
    )
    .option('--json', 'print JSON: the call before and the resolution sent', false);
  finishCallCommand(cmd, io);
  cmd.action((workflowId: string, logicalCallId: string, flags: ResolveFlags) =>
    runAction(cmd, io, () =>
      withSession(flags, workflowId, async (s) => {
        const view = await readRun(s, workflowId, flags.timeout);
        const call = view.ledger.projection.calls[logicalCallId];
        if (!call) {
          const ids = Object.keys(view.ledger.projection.calls);
          throw new CallNotFoundError(
            `run ${workflowId} has no call ${logicalCallId} (calls: ${ids.join(', ') || 'none'})`,
          );
        }
        if (!flags.json)
          io.out(
            `call ${logicalCallId} (${call.toolName}) is ${call.state}; operation key ${call.operationKey ?? '?'}\n`,
          );
        if (flags.outcome === 'SUCCEEDED' && flags.receipt === undefined) {
          io.err.write('note: no --receipt: the audit will report this effect as having no receipt\n');
        }
        const resolution: OperatorResolution = {
          logicalCallId,
          outcome: flags.outcome,
          operator: flags.as,
          reason: flags.reason,
          ...(flags.receipt !== undefined ? { receipt: flags.receipt } : {}),
        };
        const tq = view.description.taskQueue;
        await s.answered(
          'resolveCall update',
          workflowId,
          flags.timeout,
          () => view.handle.executeUpdate(resolveCallUpdate, { args: [resolution] }),
          tq,
        );
        if (flags.json) printJson(io, { workflowId, before: call, resolution, accepted: true });
        else io.out(`resolved ${logicalCallId} as ${flags.outcome} by ${flags.as}: ${flags.reason}\n`);
        return 0;
      }),
    ),
  );
}
