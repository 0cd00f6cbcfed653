/**
 * One governed run with an MCP server's tools, in one command: a Temporal server (TEMPORAL_ADDRESS, else a dev
 * server from the repository's pinned CLI), fresh development keys, server-filesystem on a fresh directory (from
 * node_modules, started by the worker over stdio), this project's worker, and one run that writes a note and reads
 * it back. Prints what the durable records say and what the directory holds, then stops everything.
 *
 *   npm start
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectOrStartDevServer, createDevIssuer, generateSigningKey } from 'ledgerloop';
import { runNote } from './run-note';
import { startFilesWorker } from './worker';

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-mcp-files-'));
  const dataDir = path.join(dir, 'files');
  mkdirSync(dataDir);
  const server = await connectOrStartDevServer({ headless: true, ephemeral: true });
  const issuer = await createDevIssuer(path.join(dir, 'keys'));
  const taskQueue = `mcp-files-demo-${Date.now()}`;
  const worker = await startFilesWorker({
    dataDir,
    capabilityKey: generateSigningKey(),
    issuers: [issuer.config],
    taskQueue,
    address: server.address,
    namespace: server.namespace,
  });
  const connection = await Connection.connect({ address: server.address });
  try {
    const note = { path: path.join(dataDir, 'note.txt'), content: 'Ledgerloop wrote this once.' };
    const run = await worker.worker.runUntil(
      runNote(
        new Client({ connection, namespace: server.namespace }),
        (workflowId) => issuer.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
        note,
        { taskQueue },
      ),
    );
    const [write, read] = run.result.calls;
    const files = readdirSync(dataDir);
    const held = files.includes('note.txt') ? readFileSync(note.path, 'utf8') : undefined;
    console.log(`run ${run.workflowId}: ${run.result.stopReason}`);
    for (const call of run.result.calls)
      console.log(`  call ${call.toolName}: ${call.state} under ${call.operationKey ?? '-'}`);
    console.log(`  ledger: ${run.ledger.events.map((e) => e.type).join(' → ')}`);
    console.log(`  the server's directory: ${files.join(', ') || '(empty)'}; note.txt holds ${JSON.stringify(held)}`);
    if (
      run.result.stopReason !== 'completed' ||
      write?.state !== 'SUCCEEDED' ||
      read?.state !== 'SUCCEEDED' ||
      held !== note.content
    )
      process.exitCode = 1;
  } finally {
    await connection.close();
    await worker.stop();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  process.exit(1);
});
