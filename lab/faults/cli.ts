/** The `ledgerloop faults` subcommand (registered by cli/main.ts). */
/* eslint-disable @typescript-eslint/no-require-imports -- a require() in the action is what defers the fault lab */
import type { Command } from 'commander';
import type { RawExploreFlags } from './explore';

type FaultsFlags = RawExploreFlags & { report?: string; config?: string };

const EXPLORE_ONLY = [
  'seed',
  'runs',
  'minutes',
  'saveFailures',
  'shrinkAttempts',
  'verbose',
  'case',
  'minFired',
  'parallel',
] as const;

export function registerFaultsCommand(program: Command): void {
  program
    .command('faults')
    .description(
      'run a fault protocol (crash points, injected faults, assertions) against real processes, or explore: generate cases from a seed and check universal invariants',
    )
    .argument('[protocol]', 'protocol file, format ledgerloop.fault-protocol/1 (see docs/fault-protocol.md)')
    .option('--report <file>', 'write the JSON report here')
    .option('--explore', 'generate cases from --seed and check the universal invariants on every run')
    .option('--seed <n>', 'explore: the seed (0 to 4294967295); the same seed gives the same cases')
    .option('--runs <n>', 'explore: how many cases (default 20)')
    .option('--minutes <m>', 'explore: time budget; no run starts unless its worst case fits')
    .option('--save-failures <dir>', 'explore: write each failing case, shrunk, as a protocol file here')
    .option('--shrink-attempts <n>', 'explore: real runs spent shrinking each failing case (default 6)')
    .option('--case <i>', 'explore: run only case i of the seed (1-based), e.g. to reproduce or shrink it')
    .option('--verbose', "explore: print every case's timeline, not only a violating case's")
    .option(
      '--config <path>',
      'the project config: the protocol names its scenarios and services, and runs against its tools (default: the nearest ledgerloop.config.*; none: the built-in demo)',
    )
    .option('--min-fired <ratio>', 'explore: fail unless at least this share of the planned faults fired (0 to 1)')
    .option('--parallel <n>', 'explore: cases run side by side, each on processes of its own (default 3)')
    .action(async (file: string | undefined, o: FaultsFlags) => {
      const { commandProject } = require('../../cli/project') as typeof import('../../cli/project');
      let project: Awaited<ReturnType<typeof commandProject>>;
      try {
        project = await commandProject(o);
      } catch (err) {
        process.stderr.write(`ledgerloop faults: ${(err as Error).message}\n`);
        process.exitCode = 2;
        return;
      }
      if (o.explore && project !== undefined) {
        process.stderr.write(
          `ledgerloop faults: --explore generates cases of the built-in scenarios and services only; run it where no project config is found (this one: ${project.file})\n`,
        );
        process.exitCode = 2;
        return;
      }
      if (o.explore) {
        const { runExploreCommand } = require('./explore') as typeof import('./explore');
        process.exitCode = await runExploreCommand(file, o);
        return;
      }
      const stray = EXPLORE_ONLY.filter((k) => o[k] !== undefined);
      if (file === undefined || stray.length > 0) {
        process.stderr.write(
          file === undefined
            ? 'ledgerloop faults: give a protocol file, or --explore --seed S\n'
            : `ledgerloop faults: ${stray.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')} only apply with --explore\n`,
        );
        process.exitCode = 2;
        return;
      }
      const { runFaultsCommand } = require('./runner') as typeof import('./runner');
      process.exitCode = await runFaultsCommand(file, {
        ...(o.report ? { report: o.report } : {}),
        ...(project ? { project } : {}),
      });
    });
}
