/**
 * The governed refund agent's worker (examples/refund-ai-sdk/src/governed/worker.ts) as its own process, so that a
 * test can SIGKILL it mid-call and start another. Configured by one JSON environment variable,
 * `GOVERNED_REFUND_WORKER` ({ address, taskQueue, paymentsUrl, capabilityKey (serialized), identityIssuers });
 * prints one JSON line `{ "ready": true, "pid": ... }` when it polls, and exits when its worker stops.
 */
import { NativeConnection } from '@temporalio/worker';
import type { IdentityConfig } from 'ledgerloop';
import { parseSigningKey } from '../../src/capability/capability-keys';
import { installRuntimeLogger } from '../../src/observability/logger';
import { createGovernedRefundWorker } from '../../examples/refund-ai-sdk/src/governed/worker';
import { scriptedRefundProvider } from '../../examples/refund-ai-sdk/src/scripted-model';

export const WORKER_CONFIG_ENV = 'GOVERNED_REFUND_WORKER';

export interface GovernedRefundWorkerConfig {
  readonly address: string;
  readonly taskQueue: string;
  readonly paymentsUrl: string;
  readonly capabilityKey: string;
  readonly identityIssuers: IdentityConfig;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.env[WORKER_CONFIG_ENV] ?? '') as GovernedRefundWorkerConfig;
  installRuntimeLogger({ component: 'governed-refund-worker', level: 'WARN', coreLevel: 'ERROR' });
  const connection = await NativeConnection.connect({ address: config.address });
  const worker = await createGovernedRefundWorker({
    connection,
    taskQueue: config.taskQueue,
    paymentsUrl: config.paymentsUrl,
    modelProvider: scriptedRefundProvider(),
    capabilityKey: parseSigningKey(config.capabilityKey),
    identityIssuers: config.identityIssuers,
  });
  const running = worker.run();
  process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
  process.once('SIGTERM', () => worker.shutdown());
  await running;
  await connection.close();
}

if (require.main === module)
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
