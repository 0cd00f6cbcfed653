// @ts-check
// `npm start`: a dev server, the booking service and a worker; one run of the `book-room` scenario through the
// whole governed path (policy, capability, operation key, the service's idempotency record); what it did; then
// everything stops. The commands it runs are the ones you would type: see the README.
const { startLocalStack } = require('./local-stack');

async function main() {
  const stack = await startLocalStack('start');
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
    console.log('\nNext: `npm test` (the project on a real server), `npm run faults` (lose a response on purpose).');
    return result.stopReason === 'completed' ? 0 : 1;
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
