/**
 * Replays a run's history against this project's workflow bundle (the runtime's workflow with these tools): the
 * determinism check before deploying a change to the tools. Exit 1 when it does not replay.
 *
 *   npm run replay -- ticket-1796103092096      # TEMPORAL_ADDRESS, default localhost:7233
 */
import { Client, Connection } from '@temporalio/client';
import { replayHistory } from 'ledgerloop/worker';
import { TOOLS_MODULE } from './project';

(async () => {
  const workflowId = process.argv[2];
  if (!workflowId) throw new Error('usage: npm run replay -- <workflow id>');
  const connection = await Connection.connect({ address: process.env['TEMPORAL_ADDRESS'] ?? 'localhost:7233' });
  try {
    const history = await new Client({ connection }).workflow.getHandle(workflowId).fetchHistory();
    await replayHistory(history, { workflowId, tools: TOOLS_MODULE });
    console.log(`✓ ${workflowId} replays (${history.events?.length ?? 0} events)`);
  } finally {
    await connection.close();
  }
})().catch((err: unknown) => {
  console.error(err instanceof Error ? `✗ ${err.name}: ${err.message}` : String(err));
  process.exit(1);
});
