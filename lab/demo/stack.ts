/**
 * The local stack the demo and the integration tests run on: a Temporal dev server (or TEMPORAL_ADDRESS),
 * the wallet service as its own process, and a prebuilt workflow bundle that worker processes load.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client, type Connection } from '@temporalio/client';
import { connectClient, serverTarget } from '../../src/server/connection-config';
import type { DataConverter } from '@temporalio/common';
import { dataConverterFromEnv } from '../../src/codec/data-converter';
import { tracingFromEnv, type Tracing } from '../../src/observability/tracing';
import { connectOrStart, startDevServer, type DevServerOptions, type ServerHandle } from '../../src/server/dev-server';
import { spawnedClient, spawnService, type SpawnedService } from '../../services/spawn';
import { type DownstreamClient } from '../../src/downstream/client';
import {
  generateCapabilityTrust,
  type CapabilitySigningKey,
  type CapabilityTrust,
} from '../../src/policy/capability-keys';
import { REPO_ROOT, writeWorkflowBundle } from '../../src/worker/bundle';
import { LAB_STRATEGIES_ENV } from '../../src/worker/worker';
import { IDENTITY_ISSUERS_ENV } from '../../src/identity/config';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';

export interface Stack {
  readonly server: ServerHandle;
  readonly wallet: SpawnedService;
  readonly walletClient: DownstreamClient;
  readonly connection: Connection;
  readonly client: Client;
  readonly bundlePath: string;
  readonly dataDir: string;
  /** The client's payload codecs; workers of this stack must use the same (undefined: plain payloads). */
  readonly dataConverter?: DataConverter;
  /** The client's tracing, when on; the bundle then carries the workflow interceptors. */
  readonly tracing?: Tracing;
  stop(): Promise<void>;
  /** The dispatch side's Ed25519 key capabilities are signed with; the services verify with its public key. */
  readonly capabilityKey: CapabilitySigningKey;
  /** This stack's capability keys: dispatch and relay signing keys, the services' public key set, their env. */
  readonly capabilityTrust: CapabilityTrust;
  /**
   * Environment a worker process of this stack needs: the capability signing key, and LEDGERLOOP_ALLOW_LAB_STRATEGIES=1
   * (this stack runs the demo and the tests, which run blind_retry on purpose).
   */
  readonly workerEnv: Readonly<Record<string, string>>;
  /**
   * This stack's development identity issuer: a fresh Ed25519 key pair. Workers get only its public key set
   * (LEDGERLOOP_IDENTITY_ISSUERS in `workerEnv`); the demo and the tests mint run and actor tokens with `issue`.
   */
  readonly identity: DevIssuer;
  /** Every business service of the stack (always the wallet, plus `StackOptions.services`). */
  readonly services: Readonly<
    Partial<Record<BusinessService, { readonly proc: SpawnedService; readonly client: DownstreamClient }>>
  >;
  /** Base URL per service name: what a worker of this stack needs. */
  readonly serviceUrls: Readonly<Record<string, string>>;
}

/** The services a stack can run next to the wallet. */
export type BusinessService = 'wallet' | 'inventory' | 'shipping' | 'orders' | 'notifications';

export interface StackOptions {
  readonly server?: DevServerOptions;
  /** Where SQLite files and the bundle go; default `<repo>/.data/<name>`. */
  readonly dataDir?: string;
  readonly name?: string;
  readonly walletRetentionMs?: number;
  /** More services to run beside the wallet, each its own process and database. */
  readonly services?: readonly BusinessService[];
  /** Payload codecs for the client; default from LEDGERLOOP_CODEC_KEYS. */
  readonly dataConverter?: DataConverter;
  /** Tracing for the client and the bundle; default from LEDGERLOOP_TRACING. */
  readonly tracing?: Tracing;
  /** Start a dev server of its own even when TEMPORAL_ADDRESS is set (e.g. to have a Web UI). Default false. */
  readonly ownServer?: boolean;
  /** The capability keys; default fresh Ed25519 keys for this stack (dispatch and relay). */
  readonly capabilityTrust?: CapabilityTrust;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const dataDir = opts.dataDir ?? path.join(REPO_ROOT, '.data', opts.name ?? 'stack');
  mkdirSync(dataDir, { recursive: true });
  const dataConverter = opts.dataConverter ?? dataConverterFromEnv();
  const tracing = opts.tracing ?? tracingFromEnv('ledgerloop-client');
  const [server, bundlePath] = await Promise.all([
    opts.ownServer ? startDevServer(opts.server ?? {}) : connectOrStart(opts.server ?? {}),
    writeWorkflowBundle(path.join(dataDir, 'workflow-bundle.js'), { tracing: tracing !== undefined }),
  ]);
  // Fresh Ed25519 keys per stack: the private dispatch key goes to the workers only, the public key set to the
  // services (and the relay's own key to the relay, when one runs).
  const capabilityTrust = opts.capabilityTrust ?? generateCapabilityTrust();
  const capabilityKey = capabilityTrust.dispatch;
  const capabilityEnv = capabilityTrust.serviceEnv;
  const identity = await createDevIssuer(path.join(dataDir, `identity-${Date.now()}`));
  let wallet: SpawnedService | undefined;
  const extra: SpawnedService[] = [];
  try {
    const stamp = Date.now();
    const others = (opts.services ?? []).filter((s) => s !== 'wallet');
    const spawned = await Promise.all([
      spawnService('wallet', {
        env: capabilityEnv,
        dbPath: path.join(dataDir, `wallet-${stamp}.db`),
        ...(opts.walletRetentionMs !== undefined ? { retentionMs: opts.walletRetentionMs } : {}),
      }),
      ...others.map((name) =>
        spawnService(name, { env: capabilityEnv, dbPath: path.join(dataDir, `${name}-${stamp}.db`) }),
      ),
    ]);
    wallet = spawned[0]!;
    extra.push(...spawned.slice(1));
    const services = Object.fromEntries(
      spawned.map((proc) => [proc.name, { proc, client: spawnedClient(proc, { capabilityKey, signs: 'lookups' }) }]),
    ) as Stack['services'];
    const serviceUrls = Object.fromEntries(spawned.map((proc) => [proc.name, proc.url]));
    const { connection } = await connectClient(serverTarget(server));
    const client = new Client({
      connection,
      namespace: server.namespace,
      ...(dataConverter ? { dataConverter } : {}),
      ...(tracing ? { plugins: [tracing.plugin] } : {}),
    });
    const w = wallet;
    return {
      server,
      wallet: w,
      walletClient: spawnedClient(w, { capabilityKey, signs: 'lookups' }),
      connection,
      client,
      bundlePath,
      dataDir,
      capabilityKey,
      capabilityTrust,
      workerEnv: {
        ...capabilityTrust.workerEnv,
        [LAB_STRATEGIES_ENV]: '1',
        [IDENTITY_ISSUERS_ENV]: identity.configPath,
      },
      identity,
      services,
      serviceUrls,
      ...(dataConverter ? { dataConverter } : {}),
      ...(tracing ? { tracing } : {}),
      async stop() {
        await connection.close();
        await Promise.all([w.stop(), ...extra.map((p) => p.stop())]);
        await server.stop();
      },
    };
  } catch (err) {
    await Promise.all(extra.map((p) => p.stop()));
    await wallet?.stop();
    await server.stop();
    throw err;
  }
}
