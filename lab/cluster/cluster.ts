/**
 * The local cluster: PostgreSQL and a Temporal server built from its Go module (persistence and visibility on
 * PostgreSQL), the downstream services, and N worker processes, each its own "host": its own working directory,
 * its own copy of the workflow bundle and of the configuration it reads, reaching Temporal and the services only
 * over TCP. Everything lives under `.data/cluster/`.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Stack } from '../stack';
import { IDENTITY_ISSUERS_ENV } from '../../src/identity/config';
import { DATA_DIR } from '../../host/server/temporal-binaries';
import type { SpawnWorkerOptions } from '../spawn-worker';
import { TRANSCRIPT_URL_ENV } from '../../src/stores/transcript-store-pg';
import { QUOTA_URL_ENV } from '../../src/stores/quota-store';
import { ensureTemporalBuild, type TemporalBuild } from './build';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { TEMPORAL_TOKEN_FILE_ENV } from '../../host/server/connection-config';
import { createClusterCredentials, type ClusterCredentials } from './credentials';
import {
  clusterSecrets,
  postgresLayout,
  postgresReady,
  startPostgres,
  stopPostgres,
  transcriptUrl,
  type PostgresLayout,
} from '../../host/server/postgres';
import { applySchemas, prepareNamespace, spawnServer, writeServerFiles, type ServerFiles } from './temporal-server';
import { CODEC_KEY_ID_ENV, CODEC_KEYS_ENV } from '../../src/codec/data-converter';
import { CLUSTER_NAMESPACE, clusterPorts, portOffsetFromEnv, type ClusterPorts } from './versions';

export const CLUSTER_DIR = path.join(DATA_DIR, 'cluster');
export const STATE_FILE = path.join(CLUSTER_DIR, 'state.json');

export interface ClusterTimings {
  readonly buildMs: number;
  readonly postgresMs: number;
  readonly schemaMs: number;
  readonly serverMs: number;
}

export interface RunningCluster {
  readonly address: string;
  readonly ports: ClusterPorts;
  readonly pg: PostgresLayout;
  readonly build: TemporalBuild;
  readonly timings: ClusterTimings;
  readonly identity: ClusterIdentity;
  /** LEDGERLOOP_TRANSCRIPT_URL of the workers' shared transcript store (holds a password: never print it). */
  readonly transcriptUrl: string;
  /** LEDGERLOOP_QUOTA_URL of the workers' cross-run rate-limit windows: the same database (holds a password). */
  readonly quotaUrl: string;
  /** The server process's pid (changes when it is restarted). */
  serverPid(): number | undefined;
  /** SIGKILL the Temporal server process (nothing shuts down cleanly), then start it again and wait for it. */
  killAndRestartServer(): Promise<{ readonly downMs: number }>;
  /** Stop the server and PostgreSQL. */
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Another `cluster up` (or a run of the tests or the bench on the cluster) holds the cluster's ports and data. */
export class ClusterBusyError extends Error {
  override readonly name = 'ClusterBusyError';
}

/** Whose tokens the cluster's frontend accepts, and the tokens of the cluster's own processes. */
export interface ClusterIdentity {
  /** The cluster's development issuer: fresh keys at each start; its public keys are all the server gets. */
  readonly issuer: DevIssuer;
  readonly credentials: ClusterCredentials;
}

/**
 * The cluster's issuer and its processes' tokens (lab/cluster/credentials.ts). From here on this process acts as
 * the cluster's admin (LEDGERLOOP_TEMPORAL_TOKEN_FILE), and so does every child that inherits its environment
 * (the tests and the bench on the cluster, with their own workers); a worker host is given its own token instead.
 */
export async function createClusterIdentity(): Promise<ClusterIdentity> {
  const issuer = await createDevIssuer(path.join(CLUSTER_DIR, 'identity'));
  const credentials = await createClusterCredentials(path.join(CLUSTER_DIR, 'credentials'), issuer);
  process.env[TEMPORAL_TOKEN_FILE_ENV] = credentials.adminTokenFile;
  return { issuer, credentials };
}

/**
 * Builds what is missing, starts PostgreSQL and the server (its frontend accepting the tokens of `identity`, a
 * fresh one when not given), and registers the namespace and search attributes as the cluster's admin.
 */
export async function startCluster(
  log: (line: string) => void = () => {},
  given?: ClusterIdentity,
): Promise<RunningCluster> {
  const running = readState();
  if (running && alive(running.pid)) {
    throw new ClusterBusyError(
      `a cluster is already up (pid ${running.pid}, Temporal ${running.address}); \`ledgerloop cluster down\` stops it`,
    );
  }
  const ports = clusterPorts(portOffsetFromEnv());
  fs.mkdirSync(CLUSTER_DIR, { recursive: true });
  const identity = given ?? (await createClusterIdentity());
  let t = Date.now();
  const build = await ensureTemporalBuild(log);
  const buildMs = Date.now() - t;
  const pg = postgresLayout(CLUSTER_DIR, ports.postgres);
  t = Date.now();
  log(`cluster: PostgreSQL on 127.0.0.1:${ports.postgres} (${pg.dataDir})`);
  await startPostgres(pg, log);
  const postgresMs = Date.now() - t;
  const { temporalPassword } = clusterSecrets(pg);
  t = Date.now();
  await applySchemas(build, pg, temporalPassword);
  const schemaMs = Date.now() - t;
  const files: ServerFiles = writeServerFiles(CLUSTER_DIR, ports, temporalPassword, identity.issuer.configPath);
  const address = `127.0.0.1:${ports.frontend}`;
  t = Date.now();
  let server: ChildProcess = spawnServer(build, files);
  try {
    await prepareNamespace(address);
  } catch (err) {
    server.kill('SIGKILL');
    identity.credentials.stop();
    await stopPostgres(pg).catch(() => undefined);
    throw new Error(`${(err as Error).message} (server log: ${files.logFile})`);
  }
  const serverMs = Date.now() - t;
  log(`cluster: Temporal ${address} ready (namespace default, search attributes registered; log ${files.logFile})`);
  return {
    address,
    ports,
    pg,
    build,
    identity,
    timings: { buildMs, postgresMs, schemaMs, serverMs },
    transcriptUrl: transcriptUrl(pg),
    quotaUrl: transcriptUrl(pg),
    serverPid: () => server.pid,
    async killAndRestartServer() {
      const down = Date.now();
      server.kill('SIGKILL');
      await exited(server);
      server = spawnServer(build, files);
      await prepareNamespace(address);
      return { downMs: Date.now() - down };
    },
    async stop() {
      identity.credentials.stop();
      if (server.exitCode === null && server.signalCode === null) {
        server.kill('SIGTERM');
        const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
        await exited(server);
        clearTimeout(timer);
      }
      await stopPostgres(pg);
    },
  };
}

/**
 * Worker host `name`: a directory of its own holding its copy of the workflow bundle and of the identity issuers
 * file, its planner log and its transcript database. Nothing in it is shared with another host. Its token for
 * the frontend (`worker:<queue>`, lab/cluster/credentials.ts) is the file the cluster keeps fresh, named here.
 */
export function workerHost(
  stack: Pick<Stack, 'bundlePath' | 'workerEnv'>,
  name: string,
  shared: { readonly transcriptUrl?: string; readonly temporalTokenFile?: string; readonly quotaUrl?: string } = {},
): Partial<SpawnWorkerOptions> {
  const dir = path.join(CLUSTER_DIR, 'hosts', name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const bundle = path.join(dir, 'workflow-bundle.js');
  fs.copyFileSync(stack.bundlePath, bundle);
  // Everything a worker needs is passed explicitly (deploy/deployment.json lists it), never left to inheritance.
  const codecKeys = process.env[CODEC_KEYS_ENV];
  const env: Record<string, string> = {
    ...stack.workerEnv,
    TEMPORAL_NAMESPACE: CLUSTER_NAMESPACE,
    ...(codecKeys ? { [CODEC_KEYS_ENV]: codecKeys } : {}),
    ...(process.env[CODEC_KEY_ID_ENV] ? { [CODEC_KEY_ID_ENV]: process.env[CODEC_KEY_ID_ENV] } : {}),
    LEDGERLOOP_TRANSCRIPT_DB: path.join(dir, 'transcripts.db'),
    // The model transcripts every host reads and writes: the cluster's PostgreSQL.
    ...(shared.transcriptUrl ? { [TRANSCRIPT_URL_ENV]: shared.transcriptUrl } : {}),
    // Who this host is at the frontend; it replaces whatever token the supervisor's environment names.
    ...(shared.temporalTokenFile ? { [TEMPORAL_TOKEN_FILE_ENV]: shared.temporalTokenFile } : {}),
    // The rate-limit windows every host counts in (it wins over the stack's SQLite file, which only one host shares).
    ...(shared.quotaUrl ? { [QUOTA_URL_ENV]: shared.quotaUrl } : {}),
  };
  const issuers = stack.workerEnv[IDENTITY_ISSUERS_ENV];
  if (issuers !== undefined) {
    const own = path.join(dir, 'identity-issuers.json');
    fs.copyFileSync(issuers, own);
    env[IDENTITY_ISSUERS_ENV] = own;
  }
  return { cwd: dir, workflowBundlePath: bundle, plannerLogFile: path.join(dir, 'planner.log'), env };
}

export interface ClusterState {
  readonly pid: number;
  readonly address: string;
  readonly ports: ClusterPorts;
  readonly services: Readonly<Record<string, string>>;
  readonly ui?: string;
  /** The Web UI's viewer gateway (host:port): the UI's rights at the frontend. */
  readonly gateway?: string;
  readonly workers: readonly { readonly host: string; readonly pid: number }[];
  readonly startedAt: string;
}

export function readState(): ClusterState | undefined {
  try {
    return JSON.parse(fs.readFileSync(STATE_FILE, 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

export function writeState(state: ClusterState): void {
  fs.writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
}

export function clearState(): void {
  fs.rmSync(STATE_FILE, { force: true });
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export { postgresReady };
