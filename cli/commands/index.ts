/**
 * The run commands of `ledgerloop` (issue #7): start, list, show, export, replay, approve, deny, resolve, audit,
 * cancel. main.ts registers them with one `registerRunCommands(program)` call.
 */
import type { Command } from 'commander';
import { registerAudit } from './audit';
import { registerCancel } from './cancel';
import { registerDecide } from './decide';
import { registerExport } from './export';
import { registerList } from './list';
import { registerReplay } from './replay';
import { registerResolve } from './resolve';
import { processIO, type CommandIO } from './shared';
import { registerShow } from './show';
import { registerStart } from './start';

export type { CommandIO };

/** Adds the run commands to `program`; `io` replaces stdout, stderr and process exit (tests). */
export function registerRunCommands(program: Command, io: CommandIO = processIO): Command {
  registerStart(program, io);
  registerList(program, io);
  registerShow(program, io);
  registerExport(program, io);
  registerReplay(program, io);
  registerDecide(program, io);
  registerResolve(program, io);
  registerAudit(program, io);
  registerCancel(program, io);
  return program;
}
