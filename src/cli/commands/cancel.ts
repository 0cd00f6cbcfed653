/**
 * `ledgerloop cancel`: ask Temporal to cancel a run. What this proves is narrow: the request is recorded in the
 * history (WorkflowExecutionCancelRequested) and the caller stops waiting. It does not undo or prevent effects
 * already in flight; how the workflow settles those (calls in flight become UNKNOWN and are reconciled by key) is
 * the workflow's side, recorded in its ledger.
 */
import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { addConnectionOptions, withSession, type ConnectionFlags } from '../connect';
import { OperationRefusedError } from '../errors';
import { parseNonEmpty } from '../parse';
import { describeRun } from './read-run';
import { arg, configureCommand, printJson, runAction, type CommandIO } from './shared';

interface CancelFlags extends ConnectionFlags {
  readonly reason: string;
  readonly json: boolean;
}

export const CANCEL_SEMANTICS = `
What cancellation means:
  The request is recorded in the run's history (WorkflowExecutionCancelRequested) and this command stops there.
  It proves only that we asked and stopped waiting. It does NOT undo an effect, and it does not prove that a call
  already sent did not commit: a dispatch in flight may still land downstream. The workflow handles the request:
  calls in flight become UNKNOWN and are reconciled by their operation key (or left for an operator), and the
  ledger records the outcome. Check it with \`ledgerloop show <workflowId>\` and \`ledgerloop audit <workflowId>\`.`;

export function registerCancel(program: Command, io: CommandIO): void {
  const cmd = program
    .command('cancel')
    .description('request cancellation of a run (only proves we stopped waiting; see below)')
    .argument(
      '<workflowId>',
      'the run’s workflow id',
      arg((v) => parseNonEmpty(v, 'workflowId')),
    )
    .option(
      '--reason <text>',
      'recorded with the cancel request',
      arg((v) => parseNonEmpty(v, '--reason')),
      'cancelled with ledgerloop cancel',
    )
    .option('--json', 'print JSON', false)
    .addHelpText('after', CANCEL_SEMANTICS);
  addConnectionOptions(cmd);
  configureCommand(cmd, io);
  cmd.action((workflowId: string, flags: CancelFlags) =>
    runAction(cmd, io, () =>
      withSession(flags, workflowId, async (s) => {
        const { description } = await describeRun(s, workflowId);
        if (description.status.name !== 'RUNNING') {
          throw new OperationRefusedError(`run ${workflowId} is already ${description.status.name}; nothing to cancel`);
        }
        // The raw call, because WorkflowHandle.cancel() has no way to record a reason.
        await s.client.workflowService.requestCancelWorkflowExecution({
          namespace: s.namespace,
          workflowExecution: { workflowId, runId: description.runId },
          identity: s.client.options.identity,
          requestId: randomUUID(),
          reason: flags.reason,
        });
        if (flags.json) {
          printJson(io, { workflowId, runId: description.runId, cancelRequested: true, reason: flags.reason });
        } else {
          io.out(`cancellation requested for ${workflowId} (run ${description.runId}): ${flags.reason}\n`);
          io.out(
            'This proves only that the request is recorded and we stopped waiting; it does not undo effects in flight.\n',
          );
          io.out(`The workflow settles in-flight calls and records them: ledgerloop show ${workflowId}\n`);
        }
        return 0;
      }),
    ),
  );
}
