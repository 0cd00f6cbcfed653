/** The `ledgerloop` command line. */
import { Command } from 'commander';
import { runDemo } from './demo';

const program = new Command('ledgerloop').description('Governed LLM agent loops on Temporal').showHelpAfterError();

program
  .command('demo')
  .description('run the opening-failure demo once per retry strategy on a local dev server (what `npm start` runs)')
  .option('--once', 'exit after printing the table instead of keeping the stack up for the Web UI', false)
  .option('--json', 'print the rows as one JSON array', false)
  .action(async (o: { once: boolean; json: boolean }) => {
    process.exitCode = await runDemo({ once: o.once, json: o.json });
  });

program
  .command('worker')
  .description('run a worker process (configured by TEMPORAL_ADDRESS, LEDGERLOOP_SERVICES, LEDGERLOOP_TASK_QUEUE)')
  .action(async () => {
    const { runWorkerProcess } = await import('../worker/main');
    await runWorkerProcess();
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? `ledgerloop: ${err.message}` : err);
  process.exit(1);
});
