/** `ledgerloop export`: a run's Temporal history as a JSON fixture that `ledgerloop replay` (and the tests) replay. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '../../host/client/history-json';
import type { Command } from 'commander';
import { addConnectionOptions, withSession, type ConnectionFlags } from '../connect';
import { CliUsageError } from '../errors';
import { withProgress } from '../progress';
import { describeRun } from './read-run';
import { configureCommand, runAction, runCommand, type CommandIO } from './shared';

interface ExportFlags extends ConnectionFlags {
  readonly out?: string;
}

export function registerExport(program: Command, io: CommandIO): void {
  const cmd = runCommand(
    program,
    'export',
    'write a run’s history as a JSON fixture (payloads stay as stored, encrypted when a codec is on)',
  ).option('--out <file>', 'write to this file (parent folders are created) instead of stdout');
  addConnectionOptions(cmd);
  configureCommand(cmd, io);
  cmd.action((workflowId: string, flags: ExportFlags) =>
    runAction(cmd, io, () =>
      withSession(flags, workflowId, async (s) => {
        const { handle, description } = await describeRun(s, workflowId);
        const history = await withProgress(`fetching the history of ${workflowId}`, () => handle.fetchHistory(), {
          stream: io.err,
        });
        const json = `${historyToJSON(history)}\n`;
        const events = history.events?.length ?? 0;
        if (description.status.name === 'RUNNING') {
          io.err.write(`note: ${workflowId} is still running; the fixture holds its first ${events} events\n`);
        }
        if (flags.out === undefined) {
          io.out(json);
          return 0;
        }
        try {
          mkdirSync(path.dirname(path.resolve(flags.out)), { recursive: true });
          writeFileSync(flags.out, json);
        } catch (err) {
          throw new CliUsageError(`--out: cannot write ${flags.out}: ${(err as Error).message}`);
        }
        io.err.write(`wrote ${events} events of ${workflowId} to ${flags.out}\n`);
        return 0;
      }),
    ),
  );
}
