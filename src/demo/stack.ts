/**
 * The local stack the demo and the integration tests run on: a Temporal dev server (or TEMPORAL_ADDRESS),
 * the wallet service as its own process, and a prebuilt workflow bundle that worker processes load.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { connectOrStart, type DevServerOptions, type ServerHandle } from '../server/dev-server';
import { spawnService, type SpawnedService } from '../services/spawn';
import { DownstreamClient } from '../downstream/client';
import { REPO_ROOT, writeWorkflowBundle } from '../worker/bundle';

export interface Stack {
  readonly server: ServerHandle;
  readonly wallet: SpawnedService;
  readonly walletClient: DownstreamClient;
  readonly connection: Connection;
  readonly client: Client;
  readonly bundlePath: string;
  readonly dataDir: string;
  stop(): Promise<void>;
}

export interface StackOptions {
  readonly server?: DevServerOptions;
  /** Where SQLite files and the bundle go; default `<repo>/.data/<name>`. */
  readonly dataDir?: string;
  readonly name?: string;
  readonly walletRetentionMs?: number;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const dataDir = opts.dataDir ?? path.join(REPO_ROOT, '.data', opts.name ?? 'stack');
  mkdirSync(dataDir, { recursive: true });
  const [server, bundlePath] = await Promise.all([
    connectOrStart(opts.server ?? {}),
    writeWorkflowBundle(path.join(dataDir, 'workflow-bundle.js')),
  ]);
  let wallet: SpawnedService | undefined;
  try {
    wallet = await spawnService('wallet', {
      dbPath: path.join(dataDir, `wallet-${Date.now()}.db`),
      ...(opts.walletRetentionMs !== undefined ? { retentionMs: opts.walletRetentionMs } : {}),
    });
    const connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection, namespace: server.namespace });
    const w = wallet;
    return {
      server,
      wallet: w,
      walletClient: new DownstreamClient({ baseUrl: w.url }),
      connection,
      client,
      bundlePath,
      dataDir,
      async stop() {
        await connection.close();
        await w.stop();
        await server.stop();
      },
    };
  } catch (err) {
    await wallet?.stop();
    await server.stop();
    throw err;
  }
}
