// @ts-check
// `npm start`: the whole stack (scripts/stack.js), one `checkout` run through the governed path (an order in the
// team's PostgreSQL, then the card charged at the provider), what each downstream's own storage holds, the ledger
// as `ledgerloop show` prints it; then everything stops.
const { startStack } = require('./stack');

async function main() {
  const stack = await startStack('start');
  try {
    const order = `ord_${Date.now().toString(36)}`;
    const vars = { order, customer: 'cus_alice', minor: 1250 };
    const args = [
      'start',
      '--scenario',
      'checkout',
      ...Object.entries(vars).flatMap(([k, v]) => ['--var', `${k}=${v}`]),
    ];
    const run = await stack.cli([...args, '--wait', '--json']);
    if (run.code !== 0) {
      process.stderr.write(run.err);
      return run.code;
    }
    const { workflowId, result } = JSON.parse(run.out);
    console.log(`run ${workflowId}: ${result.stopReason} (PostgreSQL: ${stack.postgres})`);
    for (const call of result.calls)
      console.log(`  ${call.toolName}: ${call.state} (operation key ${call.operationKey})`);
    const charge = result.calls.find((/** @type {any} */ c) => c.toolName === 'charge_card');
    console.log(`the team's PostgreSQL holds ${await stack.orderCount(order)} order ${order}`);
    console.log(
      `the provider holds ${charge ? stack.vendorCount('charges', `ll_${charge.operationKey}`) : 0} charge(s) under its key`,
    );
    const shown = await stack.cli(['show', workflowId]);
    process.stdout.write(`\n${shown.out}`);
    console.log('\nNext: `npm test` (each tool under faults), `npm run faults` (the fault protocol on each tool).');
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
