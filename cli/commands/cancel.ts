/**
 * `ledgerloop cancel`: ask the run to stop, as a verified requester: the `requestCancel` update carries your
 * identity token, the run verifies it (its own principal, or a role the policy lists in `cancellers`), records you
 * in `CancellationRequested`, then cancels its main scope exactly as Temporal's cancel would. What this proves is narrow: the request is recorded in the
 * history (WorkflowExecutionCancelRequested) and the caller stops waiting. It does not undo or prevent effects
 * already in flight; how the workflow settles those (calls in flight become UNKNOWN and are reconciled by key) is
 * the workflow's side, recorded in its ledger.
 */
import type { Command } from 'commander';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { requestCancelUpdate } from '../../workflows/definitions';
import { actorToken, addTokenOption, guardCommandToken, tokenForCommand } from './call-command';
import { addConnectionOptions, withSession, type ConnectionFlags } from '../connect';
import { OperationRefusedError } from '../errors';
import { parseNonEmpty } from '../parse';
import { describeRun } from './read-run';
import { arg, configureCommand, printJson, runAction, runCommand, type CommandIO } from './shared';

interface CancelFlags extends ConnectionFlags {
  readonly reason: string;
  readonly token?: string;
  /** `--allow-token-in-clear`: send the token even without codec keys. */
  readonly allowTokenInClear?: boolean;
  readonly json: boolean;
}

export const CANCEL_SEMANTICS = `
What cancellation means:
  The request is recorded in the run's history (WorkflowExecutionCancelRequested) and this command stops there.
  It proves only that we asked and stopped waiting. It does NOT undo an effect, and it does not prove that a call
  already sent did not commit: a dispatch in flight may still land downstream. The workflow handles the request:
  calls in flight become UNKNOWN and are reconciled by their operation key (or left for an operator), and the
  ledger records the outcome. A run that is already compensating or settling finishes that first, uninterrupted,
  then stops operator_stopped. Check it with \`ledgerloop show <workflowId>\` and \`ledgerloop audit <workflowId>\`.`;

export function registerCancel(program: Command, io: CommandIO): void {
  const cmd = runCommand(program, 'cancel', 'request cancellation of a run (only proves we stopped waiting; see below)')
    .option(
      '--reason <text>',
      'recorded with the cancel request',
      arg((v) => parseNonEmpty(v, '--reason')),
      'cancelled with ledgerloop cancel',
    )
    .option('--json', 'print JSON', false)
    .addHelpText('after', CANCEL_SEMANTICS);
  addTokenOption(cmd);
  addConnectionOptions(cmd);
  configureCommand(cmd, io);
  cmd.action((workflowId: string, flags: CancelFlags) =>
    runAction(cmd, io, async () => {
      // A token to cancel exactly this run (src/identity/purpose.ts).
      const token = await tokenForCommand(actorToken(flags.token), { purpose: 'cancel', run: workflowId });
      return withSession({ ...flags, actorToken: token }, workflowId, async (s) => {
        await guardCommandToken(s.dataConverter, 'the canceller’s token', io.err, flags.allowTokenInClear);
        const { handle, description } = await describeRun(s, workflowId);
        if (description.status.name !== 'RUNNING') {
          throw new OperationRefusedError(`run ${workflowId} is already ${description.status.name}; nothing to cancel`);
        }
        // Temporal's own cancel carries no identity: the update does, and the run cancels itself once it verified it.
        try {
          await handle.executeUpdate(requestCancelUpdate, { args: [{ token, reason: flags.reason }] });
        } catch (err) {
          if (err instanceof WorkflowUpdateFailedError) {
            const cause = err.cause as { type?: string; message?: string } | undefined;
            throw new OperationRefusedError(
              `refused (${cause?.type ?? 'update failed'}): ${cause?.message ?? err.message}`,
            );
          }
          throw err;
        }
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
      });
    }),
  );
}
