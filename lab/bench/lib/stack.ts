/**
 * The benchmark's one stack: ONE Temporal server, ONE wallet process, the workflow bundles (agentRun's, bareLoop's,
 * peerLoop's), one capability key. Governed, bare and peer runs share all of it. The server is a headless dev server on a
 * temp SQLite file, or with `--target cluster` the local cluster's server on PostgreSQL (lab/cluster/). The rest
 * comes from the lab's one stack builder (lab/stack.ts).
 */
import { serializeSigningKey, type CapabilitySigningKey } from '../../../src/capability/capability-keys';
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { startCluster } from '../../cluster/cluster';
import { startDevServer, type DevServer } from '../../../host/server/dev-server';
import { groupCpuMs, processCpuMs, treeCpuMs } from './proc-cpu';
import { resolveTemporalCli } from '../../../host/server/temporal-binaries';
import type { SpawnedService } from '../../../services/spawn';
import type { AdminClient } from '../../../services/admin-client';
import { IDENTITY_ISSUERS_ENV } from '../../../src/identity/config';
import type { DevIssuer } from '../../../src/identity/issue';
import { startStack, type Stack } from '../../stack';
import { useBenchIdentityToken } from './runs';
import { PRINCIPAL, TENANT } from './principal';
import type { WorkerProcConfig, WorkerTuning } from '../worker-proc';
import { writeBenchBundle } from './bundles';

export const BARE_WORKFLOWS_PATH = path.join(__dirname, '..', 'workflows', 'bare-index.ts');
export const PEER_WORKFLOWS_PATH = path.join(__dirname, '..', 'workflows', 'peer-index.ts');
export const AISDK_WORKFLOWS_PATH = path.join(__dirname, '..', 'workflows', 'aisdk-index.ts');
export const AISDK_GOVERNED_WORKFLOWS_PATH = path.join(__dirname, '..', 'workflows', 'aisdk-governed-index.ts');

/**
 * Which workflow bundle a worker loads. `governed`: the production bundle (workflows/index.ts, built by
 * host/worker/bundle.ts exactly as the workers build it). `bare`: bareLoop alone. `peer`: peerLoop alone.
 * `aisdk`: aiSdkLoop alone, bundled as a team bundles it (`AiSdkPlugin`, none of Ledgerloop's bundler options).
 * `aisdk-governed`: aiSdkGovernedLoop alone, bundled as a team that adds Ledgerloop bundles it (`AiSdkPlugin` and
 * `LedgerloopPlugin({ ownWorkflows: true })`, whose bundler options it then gets).
 */
export type BundleKind = 'governed' | 'bare' | 'peer' | 'aisdk' | 'aisdk-governed';

export { PRINCIPAL, TENANT } from './principal';
export const ACCOUNTS = 16;

export type BenchTarget = 'dev' | 'cluster';

/** The Temporal server the runs go through, whichever it is. */
export interface BenchServer {
  readonly address: string;
  readonly namespace: string;
  /** What it is, for the report. */
  readonly label: string;
  readonly startupMs: number;
  /** CPU time so far of the server's processes (the cluster: the Temporal server and PostgreSQL). */
  cpuMs(): number;
  /**
   * The client sends the credentials the environment names: the cluster's frontend authorizes every call, and
   * `startCluster` names its admin token file there (the workers inherit it). Absent: a dev server, none sent.
   */
  readonly external?: boolean;
  /**
   * The cluster's quota store (LEDGERLOOP_QUOTA_URL: its PostgreSQL, with a password; never print it). Absent on the
   * dev server, where a quota store is a SQLite file of one host.
   */
  readonly quotaUrl?: string;
  stop(): Promise<void>;
}

export interface BenchStack {
  readonly dir: string;
  readonly target: BenchTarget;
  readonly server: BenchServer;
  readonly wallet: SpawnedService;
  readonly walletClient: AdminClient;
  readonly connection: Connection;
  readonly client: Client;
  readonly bundles: Readonly<Record<BundleKind, string>>;
  readonly capabilityKey: CapabilitySigningKey;
  /** The stack's development identity issuer (the operator console's sign-in in the console section). */
  readonly identity: DevIssuer;
  readonly setupMs: { readonly server: number; readonly bundle: number; readonly wallet: number };
  workerConfig(taskQueue: string, tuning: WorkerTuning, bundle: BundleKind): WorkerProcConfig;
  stop(): Promise<void>;
}

/**
 * Where the temp databases go. Default: /dev/shm (RAM) when it exists, so the figures measure CPU work and
 * round trips rather than this VM's fsync latency (about 2 ms per fsync on its disk; the dev server's SQLite
 * syncs on every transaction). `--db-on-disk` (BENCH_DB_ON_DISK=1) puts them under os.tmpdir() instead.
 */
export function benchTmpRoot(onDisk: boolean): string {
  if (onDisk) return os.tmpdir();
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return os.tmpdir();
  }
}

export function account(i: number): string {
  return `acct_b${i % ACCOUNTS}`;
}

/**
 * The server suggests continue-as-new at 4,096 events by default, and agentRun follows the suggestion, so no
 * single history could reach the 10k events the replay figure needs. The benchmark's server suggests it later.
 */
export const SUGGEST_CONTINUE_AS_NEW_AT = 50_000;

/**
 * startDevServer has no option for dynamic config; it runs the CLI named by TEMPORAL_CLI. This wrapper (in a
 * directory of its own, since /dev/shm may be mounted noexec) adds one `--dynamic-config-value` to
 * `server start-dev` and passes everything else through unchanged.
 */
function cliWrapper(): { file: string; dir: string } {
  const real = resolveTemporalCli();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-bench-cli-'));
  const file = path.join(dir, 'temporal');
  const flag = `--dynamic-config-value limit.historyCount.suggestContinueAsNew=${SUGGEST_CONTINUE_AS_NEW_AT}`;
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      `if [ "$1" = server ] && [ "$2" = start-dev ]; then exec '${real}' "$@" ${flag}; fi`,
      `exec '${real}' "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
  return { file, dir };
}

async function startDev(dir: string): Promise<DevServer> {
  const wrapper = cliWrapper();
  const previous = process.env.TEMPORAL_CLI;
  process.env.TEMPORAL_CLI = wrapper.file;
  try {
    return await startDevServer({
      headless: true,
      ephemeral: true,
      dbFile: path.join(dir, 'temporal.db'),
      logFile: path.join(dir, 'temporal.log'),
    });
  } finally {
    if (previous === undefined) delete process.env.TEMPORAL_CLI;
    else process.env.TEMPORAL_CLI = previous;
    // The CLI binary was exec'ed by the wrapper: the wrapper file is no longer needed once the server runs.
    rmSync(wrapper.dir, { recursive: true, force: true });
  }
}

function devBenchServer(server: DevServer): BenchServer {
  return {
    address: server.address,
    namespace: server.namespace,
    label: 'dev server (SQLite)',
    startupMs: server.startupMs,
    cpuMs: () => groupCpuMs(server.pid),
    stop: () => server.stop(),
  };
}

/** The local cluster's Temporal server on PostgreSQL (no services or workers of its own: the bench brings them). */
async function clusterBenchServer(): Promise<BenchServer> {
  const t0 = Date.now();
  const cluster = await startCluster();
  const postmaster = (): number =>
    Number(readFileSync(path.join(cluster.pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return {
    address: cluster.address,
    namespace: 'default',
    label: 'cluster (Temporal on PostgreSQL)',
    external: true,
    startupMs: Date.now() - t0,
    cpuMs: () => processCpuMs(cluster.serverPid() ?? -1) + treeCpuMs(postmaster()),
    quotaUrl: cluster.quotaUrl,
    stop: () => cluster.stop(),
  };
}

async function startServer(dir: string, target: BenchTarget): Promise<BenchServer> {
  return target === 'cluster' ? clusterBenchServer() : devBenchServer(await startDev(dir));
}

export async function startBenchStack(opts: { dbOnDisk?: boolean; target?: BenchTarget } = {}): Promise<BenchStack> {
  const target = opts.target ?? 'dev';
  const dir = mkdtempSync(path.join(benchTmpRoot(opts.dbOnDisk ?? false), 'ledgerloop-bench-'));
  // One server, one wallet, every bundle: governed, bare and peer runs share all of it (plain payloads, no tracing).
  let stack: Stack<BenchServer>;
  try {
    stack = await startStack({
      dataDir: dir,
      startServer: () => startServer(dir, target),
      dbFile: (name) => `${name}.db`,
      clientTimeoutMs: 30_000,
      dataConverter: null,
      tracing: null,
      identityDir: path.join(dir, 'identity'),
      bundle: { file: 'bundle-governed.js' },
      moreBundles: {
        bare: { file: 'bundle-bare.js', workflowsPath: BARE_WORKFLOWS_PATH },
        peer: { file: 'bundle-peer.js', workflowsPath: PEER_WORKFLOWS_PATH },
      },
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const { server, wallet, walletClient, capabilityKey, identity } = stack;
  // Governed runs verify their principal's identity token before the first model call: the stack's development
  // issuer, its public keys handed to every worker process (they inherit this environment), a start token of the
  // bench principal minted for each governed run (a token starts one run: src/identity/purpose.ts).
  process.env[IDENTITY_ISSUERS_ENV] = identity.configPath;
  useBenchIdentityToken((run) => identity.issueFor({ purpose: 'start', run }, PRINCIPAL, TENANT));
  for (let i = 0; i < ACCOUNTS; i++) {
    await walletClient.seedAccount({
      tenant: TENANT,
      account: account(i),
      balanceMinor: 1_000_000_000_000,
      currency: 'EUR',
    });
  }
  const aisdkStarted = Date.now();
  let aisdk: string;
  let aisdkGoverned: string;
  try {
    // Loaded here, not at the top: `ai` is an ES module that only the AI SDK agents' bundles need (a test that
    // imports this file's types must not load it).
    /* eslint-disable @typescript-eslint/no-require-imports -- a require() in a function is what defers the modules */
    const { AiSdkPlugin } = require('@temporalio/ai-sdk') as typeof import('@temporalio/ai-sdk');
    const { scriptedAiSdkProvider } = require('../aisdk.activities') as typeof import('../aisdk.activities');
    const { LedgerloopPlugin } = require('../../../host/worker/plugin') as typeof import('../../../host/worker/plugin');
    const { StaticPolicyStore } =
      require('../../../src/stores/policy-store') as typeof import('../../../src/stores/policy-store');
    /* eslint-enable @typescript-eslint/no-require-imports */
    const aiSdkPlugin = new AiSdkPlugin({ modelProvider: scriptedAiSdkProvider() });
    aisdk = (
      await writeBenchBundle(path.join(dir, 'bundle-aisdk.js'), {
        workflowsPath: AISDK_WORKFLOWS_PATH,
        plugins: [aiSdkPlugin],
      })
    ).path;
    // The governed AI SDK agent's bundle, as its team's worker builds it: both plugins, the built-in tools (the
    // plugin is built only for its bundler options here; the bench worker registers the runtime's activities).
    const ledgerloop = new LedgerloopPlugin({
      ownWorkflows: true,
      services: { wallet: wallet.url },
      policy: new StaticPolicyStore(),
      capabilityKey,
      identityIssuers: [identity.config],
    });
    aisdkGoverned = (
      await writeBenchBundle(path.join(dir, 'bundle-aisdk-governed.js'), {
        workflowsPath: AISDK_GOVERNED_WORKFLOWS_PATH,
        plugins: [aiSdkPlugin, ledgerloop],
      })
    ).path;
  } catch (err) {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const aisdkMs = Date.now() - aisdkStarted;
  const bundles: Record<BundleKind, string> = {
    governed: stack.bundlePath,
    bare: stack.moreBundles['bare']!,
    peer: stack.moreBundles['peer']!,
    aisdk,
    'aisdk-governed': aisdkGoverned,
  };
  return {
    dir,
    target,
    server,
    wallet,
    walletClient,
    connection: stack.connection,
    client: stack.client,
    bundles,
    capabilityKey,
    identity,
    setupMs: {
      server: server.startupMs,
      bundle: stack.setupMs.bundles + aisdkMs,
      wallet: stack.setupMs.services,
    },
    workerConfig: (taskQueue, tuning, bundle) => ({
      address: server.address,
      namespace: server.namespace,
      taskQueue,
      bundlePath: bundles[bundle],
      walletUrl: wallet.url,
      capabilityKey: serializeSigningKey(capabilityKey),
      tuning,
      ...(bundle === 'aisdk' || bundle === 'aisdk-governed' ? { aiSdk: true as const } : {}),
    }),
    async stop() {
      await stack.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
