/**
 * The processes a protocol run needs: one Temporal dev server for the whole run (or TEMPORAL_ADDRESS), a dev
 * server of its own for a case that restarts the server, the workflow bundle built once, and per case FRESH
 * downstream service processes on fresh SQLite databases (so their counts belong to that case alone).
 */
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, type Connection } from '@temporalio/client';
import { connectClient, serverTarget } from '../../src/server/connection-config';
import type { DataConverter } from '@temporalio/common';
import { dataConverterFromEnv } from '../../src/codec/data-converter';
import { type DownstreamClient } from '../../src/downstream/client';
import { generateCapabilityTrust, type CapabilityTrust } from '../../src/policy/capability-keys';
import type { Policy } from '../../src/policy/policy-format';
import { connectOrStart, startDevServer, type DevServer, type ServerHandle } from '../../src/server/dev-server';
import { spawnedClient, spawnService, type SpawnedService } from '../../services/spawn';
import { writeWorkflowBundle } from '../../src/worker/bundle';
import { FAULT_WORKFLOW_INTERCEPTORS_MODULE } from './crash-points';
import type { PointFeature } from './catalog';
import type { PlannedCase } from './plan';
import type { CaseService } from './protocol-format';

/** A Temporal server with a client on it. */
export interface ServerLink {
  readonly server: ServerHandle;
  readonly connection: Connection;
  readonly client: Client;
}

export interface Lab {
  readonly shared: ServerLink;
  readonly bundlePath: string;
  /** Features found in the workflow bundle (e.g. the saga), for crash points that need them. */
  readonly features: ReadonlySet<PointFeature>;
  /** The lab's capability keys: workers get the dispatch signing key, services the public key set. */
  readonly capabilityTrust: CapabilityTrust;
  /** The lab's development identity issuer: workers get its public keys, the runner mints run and approver tokens. */
  readonly identity: DevIssuer;
  readonly dataDir: string;
  readonly dataConverter?: DataConverter;
  stop(): Promise<void>;
}

/** Which features the built workflow code has. The saga appends CompensationStarted events when it runs. */
export function bundleFeatures(code: string): Set<PointFeature> {
  const features = new Set<PointFeature>();
  if (/type:\s*['"]CompensationStarted['"]/.test(code)) features.add('saga');
  return features;
}

async function link(server: ServerHandle, dataConverter: DataConverter | undefined): Promise<ServerLink> {
  const { connection } = await connectClient(serverTarget(server));
  const client = new Client({ connection, namespace: server.namespace, ...(dataConverter ? { dataConverter } : {}) });
  return { server, connection, client };
}

/** The workflow bundle of this build, written once per protocol run, and the features found in it. */
export interface BuiltBundle {
  readonly bundlePath: string;
  readonly features: ReadonlySet<PointFeature>;
}

/** Bundles the workflows into `dataDir` (before any server starts, so a missing feature stops the run early). */
export async function buildBundle(dataDir: string): Promise<BuiltBundle> {
  mkdirSync(dataDir, { recursive: true });
  const bundlePath = await writeWorkflowBundle(path.join(dataDir, 'workflow-bundle.js'), {
    interceptorModules: [FAULT_WORKFLOW_INTERCEPTORS_MODULE],
  });
  return { bundlePath, features: bundleFeatures(readFileSync(bundlePath, 'utf8')) };
}

/** Starts (or, with TEMPORAL_ADDRESS, connects to) the protocol run's shared Temporal server. */
export async function openLab(dataDir: string, bundle: BuiltBundle): Promise<Lab> {
  const dataConverter = dataConverterFromEnv();
  const server = await connectOrStart({ headless: true, ephemeral: true, logFile: path.join(dataDir, 'temporal.log') });
  let shared: ServerLink;
  try {
    shared = await link(server, dataConverter);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const identity = await createDevIssuer(path.join(dataDir, 'identity'));
  return {
    shared,
    identity,
    bundlePath: bundle.bundlePath,
    features: bundle.features,
    capabilityTrust: generateCapabilityTrust(),
    dataDir,
    ...(dataConverter ? { dataConverter } : {}),
    async stop() {
      await shared.connection.close().catch(() => undefined);
      await server.stop();
    },
  };
}

/** A dev server of the case's own (the server-restart case), on a database in the case directory. */
export async function startOwnServer(lab: Lab, dir: string): Promise<ServerLink & { server: DevServer }> {
  const server = await startDevServer({
    headless: true,
    ephemeral: true,
    dbFile: path.join(dir, 'temporal.db'),
    logFile: path.join(dir, 'temporal.log'),
  });
  try {
    return { ...(await link(server, lab.dataConverter)), server };
  } catch (err) {
    await server.stop();
    throw err;
  }
}

export interface CaseServiceProcess {
  readonly name: CaseService;
  readonly proc: SpawnedService;
  readonly client: DownstreamClient;
  readonly dbPath: string;
}

/** The case's downstream processes. */
export interface CaseServices {
  readonly byName: ReadonlyMap<CaseService, CaseServiceProcess>;
  readonly urls: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/** Spawns the case's services on fresh databases (on `ports`, in order, when given), seeds its wallet accounts and sends its setup requests. */
export async function startCaseServices(
  lab: Lab,
  pc: PlannedCase,
  dir: string,
  ports: readonly number[] = [],
): Promise<CaseServices> {
  const env = { ...lab.capabilityTrust.serviceEnv };
  const settled = await Promise.allSettled(
    pc.services.map(async (name, i) => {
      const dbPath = path.join(dir, `${name}.db`);
      const proc = await spawnService(name, { dbPath, env, ...(ports[i] !== undefined ? { port: ports[i] } : {}) });
      return {
        name,
        proc,
        client: spawnedClient(proc, {
          capabilityKey: lab.capabilityTrust.dispatch,
          timeoutMs: 5_000,
          signs: 'lookups',
        }),
        dbPath,
      };
    }),
  );
  const started = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const stop = async (): Promise<void> => {
    await Promise.all(started.map((s) => s.proc.stop()));
  };
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  const byName = new Map(started.map((s) => [s.name, s] as const));
  const wallet = byName.get('wallet');
  try {
    for (const a of pc.accounts) {
      if (!wallet) throw new Error(`case "${pc.name}" seeds accounts but runs no wallet`);
      await wallet.client.seedAccount(a);
    }
    for (const r of pc.setup) {
      const svc = byName.get(r.service);
      if (!svc) throw new Error(`case "${pc.name}": setup names ${r.service}, which the case does not run`);
      await svc.client.request(r.method, r.path, r.body);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { byName, urls: Object.fromEntries(started.map((s) => [s.name, s.proc.url])), stop };
}

/** Writes a policy file atomically (write, then rename), so a worker never reads half a file. */
export function publishPolicy(file: string, policy: Policy): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(policy, null, 2)}\n`);
  renameSync(tmp, file);
}
