/** The `ledgerloop faults` subcommand (registered by src/cli/main.ts). */
import type { Command } from 'commander';
import { runFaultsCommand } from './runner';

export function registerFaultsCommand(program: Command): void {
  program
    .command('faults')
    .description('run a fault protocol (crash points, injected faults, assertions) against real processes')
    .argument('<protocol>', 'protocol file, format ledgerloop.fault-protocol/1 (see docs/fault-protocol.md)')
    .option('--report <file>', 'write the JSON report here')
    .action(async (file: string, o: { report?: string }) => {
      process.exitCode = await runFaultsCommand(file, o);
    });
}
