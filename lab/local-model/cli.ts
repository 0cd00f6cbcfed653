/**
 * `ledgerloop model serve|check`. The implementations are loaded in the actions, so registering the commands
 * loads nothing of the model, the lab or node-llama-cpp (test/unit/cli-startup.test.ts).
 */
/* eslint-disable @typescript-eslint/no-require-imports -- a require() in an action is what defers the module */
import type { Command } from 'commander';

function positiveInt(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} takes a whole number, not ${v}`);
  return n;
}

export function registerModelCommands(program: Command): void {
  const model = program
    .command('model')
    .description('the local model (packages/local-model): an OpenAI-compatible server on this machine');

  model
    .command('serve')
    .description('serve a local model at http://127.0.0.1:<port>/v1 (sets it up first: scripts/setup-local-model.sh)')
    .option(
      '--model <id>',
      'a model of packages/local-model/weights.json (default LEDGERLOOP_LOCAL_MODEL_ID, else smollm2-135m-instruct)',
    )
    .option('--port <port>', 'port on 127.0.0.1', '8321')
    .option('--threads <n>', 'evaluation threads (default LEDGERLOOP_LOCAL_MODEL_THREADS, else the cores)')
    .option('--context-size <tokens>', 'context size in tokens', '4096')
    .action(async (o: { model?: string; port: string; threads?: string; contextSize: string }) => {
      const { ensureLocalModel, localModelPin } = require('./server-process') as typeof import('./server-process');
      const model = localModelPin(o.model).id;
      ensureLocalModel(model);
      // Typed here, not by `typeof import(...)`: the server's modules need node-llama-cpp's types, which only the
      // package's own type check has (`tsc -p packages/local-model`).
      const { runServerProcess } = require('../../packages/local-model/src/main') as {
        runServerProcess(argv: readonly string[]): Promise<void>;
      };
      await runServerProcess([
        '--model',
        model,
        '--port',
        String(positiveInt('--port', o.port)),
        '--context-size',
        String(positiveInt('--context-size', o.contextSize)),
        ...(o.threads !== undefined ? ['--threads', String(positiveInt('--threads', o.threads))] : []),
      ]);
    });

  model
    .command('check')
    .description(
      'governed runs planned by the local model (wallet scenario and examples/ticketing), checked: one effect per intent, every proposal validated, a typed stop before the deadline',
    )
    .option('--model <id>', 'a model of packages/local-model/weights.json (default as for serve)')
    .option('--seed <n>', 'seed of the runs\u2019 goals', '1')
    .option('--wallet-runs <n>', 'runs on the wallet scenario', '2')
    .option('--ticketing-runs <n>', 'runs on examples/ticketing', '1')
    .option('--threads <n>', 'the server\u2019s evaluation threads')
    .option('--json', 'print one JSON object', false)
    .action(
      async (o: {
        model?: string;
        seed: string;
        walletRuns: string;
        ticketingRuns: string;
        threads?: string;
        json: boolean;
      }) => {
        const { runModelCheck } = require('./check-command') as typeof import('./check-command');
        process.exitCode = await runModelCheck({
          ...(o.model !== undefined ? { model: o.model } : {}),
          seed: positiveInt('--seed', o.seed),
          walletRuns: positiveInt('--wallet-runs', o.walletRuns),
          ticketingRuns: positiveInt('--ticketing-runs', o.ticketingRuns),
          ...(o.threads !== undefined ? { threads: positiveInt('--threads', o.threads) } : {}),
          json: o.json,
        });
      },
    );
}
