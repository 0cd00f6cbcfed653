/**
 * The `ledgerloop` command line. Every command is registered here, but a command's implementation is loaded only
 * when it runs (`require` in its action: under `node -r tsx/cjs` a dynamic `import()` goes through Node's ESM
 * loader, which does not resolve extensionless TypeScript paths). So `ledgerloop show` does not load the worker,
 * the demo's stack or the fault lab (test/unit/cli-startup.test.ts).
 */
/* eslint-disable @typescript-eslint/no-require-imports -- a require() in an action is what defers the module */
import { Command } from 'commander';
import { registerFaultsCommand } from '../lab/faults/cli';
import { registerLocalModelCommands } from './local-model';
import { registerRunCommands } from './commands';
import { registerInit } from './commands/init';
import { registerKeys } from './commands/keys';
import { registerMcp } from './commands/mcp';
import { registerSetup } from './commands/setup';
import { processIO } from './commands/shared';
import { versionLine } from './version';
import { ConfigError } from '../src/config';
import { CliUsageError, EXIT_USAGE } from './errors';
import { addConfigOption, loadActiveProject } from './project';

const program = new Command('ledgerloop')
  .description('Governed LLM agent loops on Temporal')
  .version(
    versionLine(),
    '-V, --version',
    'print the version of ledgerloop, of the Temporal SDK it runs on, and of the server it deploys',
  )
  .showHelpAfterError();

program
  .command('demo')
  .description('run the opening-failure demo once per retry strategy on a local dev server (what `npm start` runs)')
  .option('--once', 'exit after printing the table instead of keeping the stack up for the Web UI', false)
  .option('--json', 'print the rows as one JSON array', false)
  .option('--model <kind>', 'local: instead, a real model on this machine plans governed runs (docs/models.md)')
  .action(async (o: { once: boolean; json: boolean; model?: string }) => {
    const { runDemo } = require('./demo') as typeof import('./demo');
    process.exitCode = await runDemo({
      once: o.once,
      json: o.json,
      ...(o.model !== undefined ? { model: o.model } : {}),
    });
  });

program
  .command('cluster')
  .description(
    'Temporal on PostgreSQL with worker hosts on this machine (npm run cluster): up (default), down or status',
  )
  .argument('[action]', 'up, down or status', 'up')
  .option('--workers <n>', 'worker hosts for `up`', '3')
  .option(
    '--once',
    'run the opening failure against the cluster, killing a worker host and the server mid-run; then stop',
    false,
  )
  .action(async (action: string, o: { workers: string; once: boolean }) => {
    const { runCluster } = require('./cluster') as typeof import('./cluster');
    process.exitCode = await runCluster(action, { workers: Number(o.workers), once: o.once });
  });

const worker = program
  .command('worker')
  .description(
    'run a worker: for the project config (its tools, model, policy, services and keys), else the built-in tools, configured by the environment (docs/operations.md)',
  )
  .option('--task-queue <name>', 'the task queue to poll (env LEDGERLOOP_TASK_QUEUE; the config’s taskQueue)')
  .option('--address <host:port>', 'Temporal frontend (env TEMPORAL_ADDRESS; the config’s connection)')
  .option('--namespace <ns>', 'Temporal namespace (env TEMPORAL_NAMESPACE)')
  .option('--bundle <file>', 'a prebuilt workflow bundle (env LEDGERLOOP_WORKFLOW_BUNDLE); default: bundle at start')
  .option(
    '--max-cached-workflows <n>',
    'workflow cache size; 0 replays every task (env LEDGERLOOP_MAX_CACHED_WORKFLOWS)',
  );
addConfigOption(worker);
worker.action(
  async (o: {
    taskQueue?: string;
    address?: string;
    namespace?: string;
    bundle?: string;
    maxCachedWorkflows?: string;
  }) => {
    const { runWorkerCommand } = require('./worker-command') as typeof import('./worker-command');
    await runWorkerCommand(o);
  },
);

program
  .command('codec-server')
  .description(
    'serve /decode (and, if enabled, /encode) for the Temporal Web UI and CLI; needs LEDGERLOOP_CODEC_KEYS and LEDGERLOOP_CODEC_TOKEN',
  )
  .option('--port <port>', 'port to listen on', '8888')
  .option('--host <host>', 'address to bind (0.0.0.0 in a container)', '127.0.0.1')
  .option('--origins <list>', 'browser origins allowed, comma-separated (default: the UI on port 8233)')
  .option(
    '--allowed-hosts <list>',
    'Host header values accepted, comma-separated (default: loopback names with the port)',
  )
  .option('--enable-encode', 'serve POST /encode (off by default)', false)
  .option('--insecure-dev', 'serve without a bearer token (loopback only; development)', false)
  .action(
    async (o: {
      port: string;
      host: string;
      origins?: string;
      allowedHosts?: string;
      enableEncode: boolean;
      insecureDev: boolean;
    }) => {
      const { runCodecServerProcess } = require('../host/codec/serve') as typeof import('../host/codec/serve');
      await runCodecServerProcess({
        port: Number(o.port),
        host: o.host,
        ...(o.origins ? { origins: o.origins } : {}),
        ...(o.allowedHosts ? { allowedHosts: o.allowedHosts } : {}),
        ...(o.enableEncode ? { enableEncode: true } : {}),
        insecureDev: o.insecureDev,
      });
    },
  );

program
  .command('console')
  .description(
    'the operator console: an inbox of approvals, UNKNOWN calls and abandoned runs, acted on as the signed-in person',
  )
  .option('--address <host:port>', 'Temporal frontend (env TEMPORAL_ADDRESS)')
  .option('--namespace <ns>', 'Temporal namespace (env TEMPORAL_NAMESPACE)')
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--port <port>', 'port to listen on', '8090')
  .option(
    '--origin <url...>',
    'origins browsers reach the console by (default http://127.0.0.1:<port> and http://localhost:<port>)',
  )
  .option('--temporal-ui <url>', 'the Temporal Web UI, for links to each run')
  .option('--viewer-roles <list>', 'roles that see every item of their tenant and act on none', 'viewer')
  .action(
    async (o: {
      address?: string;
      namespace?: string;
      host: string;
      port: string;
      origin?: string[];
      temporalUi?: string;
      viewerRoles: string;
    }) => {
      const { defaultAddress, defaultNamespace } = require('./connect') as typeof import('./connect');
      const { runConsoleCommand } = require('../console/main') as typeof import('../console/main');
      process.exitCode = await runConsoleCommand({
        address: o.address ?? defaultAddress(),
        namespace: o.namespace ?? defaultNamespace(),
        host: o.host,
        port: Number(o.port),
        origin: o.origin ?? [],
        ...(o.temporalUi ? { temporalUi: o.temporalUi } : {}),
        viewerRoles: o.viewerRoles
          .split(',')
          .map((r) => r.trim())
          .filter((r) => r !== ''),
      });
    },
  );

/** The commands whose defaults (address, namespace, task queue) come from the environment the project config set. */
function registerProjectCommands(): void {
  registerRunCommands(program);
  registerKeys(program, processIO);
  registerMcp(program, processIO);
  registerInit(program, processIO);
  registerSetup(program, processIO);
  registerFaultsCommand(program);
  registerLocalModelCommands(program);
}

/** Only asks for help or the version: a broken project config must not stop it. */
const onlyHelp = (argv: readonly string[]): boolean =>
  argv.length === 0 || argv.every((a) => ['-h', '--help', 'help', '-V', '--version'].includes(a));

async function main(argv: readonly string[]): Promise<void> {
  try {
    // The project config first: its environment gives every command its defaults (cli/project.ts).
    await loadActiveProject(argv.slice(2));
  } catch (err) {
    if (!onlyHelp(argv.slice(2))) throw err;
  }
  registerProjectCommands();
  await program.parseAsync(argv);
}

main(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? `ledgerloop: ${err.message}` : err);
  // A wrong environment variable or config is bad input, like a wrong flag (cli/errors.ts).
  process.exit(err instanceof ConfigError || err instanceof CliUsageError ? EXIT_USAGE : 1);
});
