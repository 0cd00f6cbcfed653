/**
 * One governed run, end to end, in one command: a Temporal server (TEMPORAL_ADDRESS, else a dev server from the
 * repository's pinned CLI), fresh development keys, the ticketing service, this project's worker, and one run
 * that opens a ticket. Prints what the durable records say, then stops everything.
 *
 *   npm run demo
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectOrStartDevServer } from 'ledgerloop';
import { keySetFromJwks } from 'ledgerloop/services';
import { createProjectKeys } from './keys';
import { startTicketingService, ticketingService } from './service/ticketing-service';
import { runTicket } from './start-run';
import { startTicketingWorker } from './worker';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-ticketing-'));
  const server = await connectOrStartDevServer({ headless: true, ephemeral: true });
  const keys = await createProjectKeys(path.join(dir, 'keys'));
  // The service trusts only the worker's public key: every request needs a capability signed for exactly it.
  const service = await startTicketingService({
    dbPath: path.join(dir, 'ticketing.db'),
    capabilityKeys: keySetFromJwks(keys.jwks),
  });
  const taskQueue = `ticketing-demo-${Date.now()}`;
  const { worker, connection: workerConnection } = await startTicketingWorker({
    ticketingUrl: service.url,
    keys,
    taskQueue,
    address: server.address,
    namespace: server.namespace,
  });
  const connection = await Connection.connect({ address: server.address });
  try {
    const run = await worker.runUntil(
      runTicket(
        new Client({ connection, namespace: server.namespace }),
        keys,
        {
          project: 'ops',
          title: 'Printer  on floor 3 is jammed',
          labels: ['printer', 'floor-3', 'printer'],
          due: { at: '2026-12-02T09:00:00+01:00', zone: 'Europe/Berlin' },
        },
        { taskQueue },
      ),
    );
    const call = run.result.calls[0];
    const stats = call?.operationKey ? service.runtime.store.stats(call.operationKey, false) : undefined;
    const ticketId = call?.receipt?.replace(/^rcpt_/, '');
    // Read where the service holds it: its public read route answers only with a read capability for the tenant.
    const read = ticketingService.reads?.['/v1/tickets/:tenant/:ticketId'];
    const ticket = ticketId ? read?.get(service.runtime.db, { tenant: 'acme', ticketId }) : undefined;
    console.log(`run ${run.workflowId}: ${run.result.stopReason}`);
    console.log(`  call ${call?.toolName ?? '-'}: ${call?.state ?? '-'} under ${call?.operationKey ?? '-'}`);
    console.log(`  ledger: ${run.events.join(' → ')}`);
    console.log(
      `  ticketing service: ${stats?.dispatchCount ?? 0} request(s), ${stats?.businessEffectCount ?? 0} effect(s) under that key`,
    );
    console.log(`  the ticket as the service holds it (the canonical form): ${JSON.stringify(ticket)}`);
    if (run.result.stopReason !== 'completed' || call?.state !== 'SUCCEEDED' || stats?.businessEffectCount !== 1) {
      process.exitCode = 1;
    }
  } finally {
    await connection.close();
    await workerConnection.close();
    await service.close();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  process.exit(1);
});
