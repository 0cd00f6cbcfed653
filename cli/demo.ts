/**
 * `ledgerloop demo` (what `npm start` runs): bring up the dev server with its Web UI, the wallet and workers;
 * run the opening failure once per strategy; print the table and the sentences computed from it (lab/demo/table.ts);
 * exit 1 when a safety claim did not hold (a safe strategy charged more than once, a record that contradicts the
 * wallet, a projection hash that changed across the restart); else keep the stack up for the UI until Ctrl-C.
 */
import path from 'node:path';
import { startDemoCodecServer } from '../host/codec/demo-codec';
import { ensureCodecKeys } from '../src/codec/demo-key';
import { shutdownTracingFromEnv } from '../src/observability/tracing-mode';
import { DATA_DIR } from '../host/server/temporal-binaries';
import { runEveryStrategy } from '../lab/demo/opening-failure';
import { startStack } from '../lab/stack';
import { describeRows, renderTable } from '../lab/demo/table';
import { nextCommands, prepareFirstRun } from '../lab/demo/first-run';
import { DEPLOYMENT_TASK_QUEUE } from '../lab/cluster/versions';
import { DEFAULT_ADDRESS } from '../host/server/connection-config';
import { spawnWorker, type WorkerProcess } from '../lab/spawn-worker';
import { runLocalModelDemo } from './local-model';
import { startStackConsole, type StackConsole } from '../console/stack-console';
import { DEFAULT_CONSOLE_PORT } from '../console/config';

export interface DemoOptions {
  readonly once: boolean;
  readonly json: boolean;
  /** `local`: a real model on this machine drives governed runs instead (lab/local-model/demo.ts). */
  readonly model?: string;
}

export async function runDemo(opts: DemoOptions): Promise<number> {
  if (opts.model !== undefined) return runLocalModelDemo(opts.model, { once: opts.once });
  const log = (m: string): void => {
    process.stderr.write(`${m}\n`);
  };
  const headless = opts.once;
  log(
    `starting the Temporal dev server${headless ? ' (headless)' : ' with the Web UI'}, the wallet and the workflow bundle…`,
  );
  // Payloads are always encrypted: configured keys, or the demo key (see src/codec/demo-key.ts).
  const keys = ensureCodecKeys(path.join(DATA_DIR, 'codec-demo-keys'));
  log(
    keys.kind === 'demo'
      ? `payloads are encrypted with a demo key ("${keys.keyId}", kept in ${path.relative(process.cwd(), keys.file)}); set LEDGERLOOP_CODEC_KEYS for your own`
      : `payloads are encrypted with key "${keys.keyId}" (LEDGERLOOP_CODEC_KEYS)`,
  );
  // The Web UI decodes through a codec server; headless runs have no UI and need none.
  const codecServer = headless ? undefined : await startDemoCodecServer(8233);
  const stack = await startStack({
    name: 'demo',
    server: headless ? { headless: true } : { port: 7233, uiPort: 8233, uiCodecEndpoint: codecServer?.url },
  }).catch(async (err: unknown) => {
    await codecServer?.close();
    throw err;
  });
  const workers: WorkerProcess[] = [];
  let operatorConsole: StackConsole | undefined;
  let stopping = false;
  const shutdown = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log('stopping the stack…');
    await operatorConsole?.console?.close();
    await Promise.all(workers.map((w) => w.stop()));
    await stack.stop();
    await codecServer?.close();
    await shutdownTracingFromEnv();
  };
  try {
    log(
      `Temporal at ${stack.server.address}${stack.server.uiUrl ? `, Web UI at ${stack.server.uiUrl}` : ''}; wallet at ${stack.wallet.url}`,
    );
    if (codecServer) log(`codec server at ${codecServer.url} (the Web UI decodes payloads through it)`);
    const demoQueue = `demo-opening-failure-${Date.now()}`;
    const rows = await runEveryStrategy(stack, { prefix: 'demo', taskQueue: demoQueue, onProgress: log });
    const report = describeRows(rows);
    if (opts.json) {
      const keys = [
        'strategy',
        'attempts',
        'dispatches',
        'effects',
        'finalState',
        'projectionHashBefore',
        'projectionHashAfter',
      ] as const;
      process.stdout.write(`${JSON.stringify(rows.map((r) => Object.fromEntries(keys.map((k) => [k, r[k]]))))}\n`);
      for (const s of report.sentences) log(s); // stdout stays one JSON array
    } else {
      process.stdout.write(`\n${renderTable(rows)}\n\n${report.sentences.join('\n')}\n`);
    }
    const code = report.violations.length > 0 ? 1 : 0;
    if (code !== 0) {
      // Loud, whatever the mode: a safety claim of the demo did not hold.
      const banner = ['', '!'.repeat(72), ...report.violations.map((v) => `!! ${v}`), '!'.repeat(72), ''].join('\n');
      if (!opts.json) process.stdout.write(`${banner}\n`);
      process.stderr.write(`${banner}\n`);
    }
    if (opts.once) return code;
    // The stack stays up for a first hour: a worker on the default queue for the user's runs, one on the demo's
    // queue so its runs answer `show`, `audit` and the UI's queries, an account and tokens to act with.
    const workerOpts = {
      address: stack.server.address,
      services: stack.serviceUrls,
      workflowBundlePath: stack.bundlePath,
      env: stack.workerEnv,
    };
    workers.push(
      await spawnWorker({ ...workerOpts, taskQueue: DEPLOYMENT_TASK_QUEUE }),
      await spawnWorker({ ...workerOpts, taskQueue: demoQueue }),
    );
    const first = await prepareFirstRun(stack, path.join(DATA_DIR, 'demo'));
    const address = stack.server.address === DEFAULT_ADDRESS ? '' : `TEMPORAL_ADDRESS=${stack.server.address} `;
    log(
      `\nThe stack stays up. Workers poll task queues ${DEPLOYMENT_TASK_QUEUE} and ${demoQueue} (the demo's runs); acme's acct_1 is seeded;`,
    );
    log(
      `tokens for alice, carol the approver and bob the operator are in ${first.tokensDir}. Next, in another shell:\n`,
    );
    const exampleRun = rows[rows.length - 1]?.workflowId ?? '<run id>';
    for (const line of nextCommands({
      env: address,
      tokensDir: first.tokensDir,
      devIssuerKey: first.devIssuerKey,
      ...(stack.server.uiUrl ? { uiUrl: stack.server.uiUrl } : {}),
      exampleRun,
    }))
      log(line);
    operatorConsole = await startStackConsole(stack, {
      port: DEFAULT_CONSOLE_PORT,
      ...(stack.server.uiUrl ? { uiUrl: stack.server.uiUrl } : {}),
    });
    log(`\n${operatorConsole.lines.join('\n')}`);
    log('\nCtrl-C stops the stack.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    return code;
  } finally {
    await shutdown();
  }
}
