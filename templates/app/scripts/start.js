// @ts-check
// `npm start`: a dev server (with its Web UI), the booking service and a worker; one run of the `book-room`
// scenario through the whole governed path (policy, capability, operation key, the service's idempotency record);
// what it did; then the stack stays up and the next commands are printed, each runnable as printed from another
// shell, until Ctrl-C. `npm start -- --once` stops after the run. The commands it runs are the ones you would type.
const { startLocalStack } = require('./local-stack');

const once = process.argv.includes('--once');

/**
 * The commands to try next against this stack, one per line: every `ledgerloop` command reads this project's
 * config; the variables name this stack's server and the worker's task queue.
 * @param {{ address: string, taskQueue: string | undefined, uiUrl?: string, namespace: string }} stack
 * @param {string} run the run `npm start` made
 * @param {string} day
 */
function nextCommands(stack, run, day) {
  const env = `TEMPORAL_ADDRESS=${stack.address} BOOKING_TASK_QUEUE=${stack.taskQueue}`;
  const cli = `${env} npx ledgerloop`;
  return [
    'Book another room, as a user the policy allows, and wait for the result:',
    `  ${cli} start --scenario book-room --var room=r-102 --var day=${day} --wait`,
    'Show the ledger of the run above, then export its history and replay it against your tools:',
    `  ${cli} show ${run}`,
    `  ${cli} export ${run} --out book-room-history.json && ${cli} replay book-room-history.json`,
    ...(stack.uiUrl
      ? [
          'The run in the Temporal Web UI (its payloads are encrypted with your codec keys):',
          `  ${stack.uiUrl}/namespaces/${stack.namespace}/workflows/${encodeURIComponent(run)}`,
        ]
      : []),
  ];
}

async function main() {
  const stack = await startLocalStack('start', { ui: !once });
  try {
    const day = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const run = await stack.cli(
      ['start', '--scenario', 'book-room', '--var', 'room=r-101', '--var', `day=${day}`].concat(['--wait', '--json']),
    );
    if (run.code !== 0) {
      process.stderr.write(run.err);
      return run.code;
    }
    const { workflowId, result } = JSON.parse(run.out);
    console.log(`run ${workflowId}: ${result.stopReason}`);
    for (const call of result.calls)
      console.log(`  ${call.toolName}: ${call.state} (operation key ${call.operationKey})`);
    const bookings = stack.bookings();
    console.log(`the booking service holds ${bookings.length} booking(s): ${JSON.stringify(bookings)}`);
    const shown = await stack.cli(['show', workflowId]);
    process.stdout.write(`\n${shown.out}`);
    const code = result.stopReason === 'completed' ? 0 : 1;
    if (once) {
      console.log(
        '\nNext: `npm start` (it stays up for you), `npm test`, `npm run faults` (lose a response on purpose).',
      );
      return code;
    }
    console.log(`\nThe stack stays up: Temporal at ${stack.address}, the worker on task queue ${stack.taskQueue}.`);
    console.log('Next, in another shell in this folder:\n');
    for (const line of nextCommands(stack, workflowId, day)) console.log(line);
    console.log('\nThen `npm test` (the project on a real server) and `npm run faults` (lose a response on purpose).');
    console.log('Ctrl-C stops the stack.');
    await new Promise((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    return code;
  } finally {
    await stack.stop();
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  },
);
