/**
 * `ledgerloop demo` (what `npm start` runs): bring up the dev server with its Web UI, the wallet and workers;
 * run the opening failure once per strategy; print the table; keep the stack up for the UI until Ctrl-C.
 */
import { RETRY_STRATEGIES } from '../domain/run';
import { runOpeningFailure, type DemoRow } from '../demo/opening-failure';
import { startStack } from '../demo/stack';
import { renderTable } from '../demo/table';

export interface DemoOptions {
  readonly once: boolean;
  readonly json: boolean;
}

export async function runDemo(opts: DemoOptions): Promise<number> {
  const log = (m: string): void => {
    if (!opts.json) process.stderr.write(`${m}\n`);
    else process.stderr.write(`${m}\n`);
  };
  const headless = opts.once;
  log(`starting the Temporal dev server${headless ? ' (headless)' : ' with the Web UI'}, the wallet and the workflow bundle…`);
  const stack = await startStack({
    name: 'demo',
    server: headless ? { headless: true } : { port: 7233, uiPort: 8233 },
  });
  let stopping = false;
  const shutdown = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log('stopping the stack…');
    await stack.stop();
  };
  try {
    log(`Temporal at ${stack.server.address}${stack.server.uiUrl ? `, Web UI at ${stack.server.uiUrl}` : ''}; wallet at ${stack.wallet.url}`);
    const rows: DemoRow[] = [];
    const stamp = Date.now();
    for (const strategy of RETRY_STRATEGIES) {
      rows.push(
        await runOpeningFailure(stack, {
          strategy,
          taskQueue: `demo-${strategy}-${stamp}`,
          workflowId: `opening-failure-${strategy}-${stamp}`,
          onProgress: log,
        }),
      );
    }
    if (opts.json) {
      const keys = ['strategy', 'attempts', 'dispatches', 'effects', 'finalState', 'projectionHashBefore', 'projectionHashAfter'] as const;
      process.stdout.write(`${JSON.stringify(rows.map((r) => Object.fromEntries(keys.map((k) => [k, r[k]]))))}\n`);
    } else {
      process.stdout.write(`\n${renderTable(rows)}\n\n`);
      process.stdout.write('blind_retry charged twice: each attempt went out under a fresh key.\n');
      process.stdout.write('check_receipt found the receipt by key; same_key_replay got the retained result: one charge each.\n');
    }
    if (opts.once) return 0;
    log(`\nThe stack stays up: open ${stack.server.uiUrl ?? 'the Temporal UI'} and look for workflows "opening-failure-*". Ctrl-C stops it.`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    return 0;
  } finally {
    await shutdown();
  }
}
