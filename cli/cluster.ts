/**
 * `ledgerloop cluster up|down|status` and `npm run cluster [-- --once]`: Temporal on PostgreSQL with worker
 * hosts, on this machine, without containers (lab/cluster/).
 *
 * - `up` (the default) builds what is missing, starts PostgreSQL, the Temporal server, the services and N
 *   worker hosts (default 3) polling the `ledgerloop` task queue, prints where everything is, and stays in the
 *   foreground until Ctrl-C or `ledgerloop cluster down`.
 * - `--once` instead runs the opening failure once per strategy against the cluster: mid-run it SIGKILLs the
 *   worker host (a second host takes over) and the Temporal server process (restarted on the same database),
 *   prints the demo's table, stops everything, and exits 1 when a safety claim did not hold.
 * - `down` stops a running `up` (and PostgreSQL, if it was left running); `status` reports what answers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureUiBuild } from '../lab/cluster/build';
import {
  alive,
  clearState,
  CLUSTER_DIR,
  createClusterIdentity,
  postgresReady,
  readState,
  startCluster,
  workerHost,
  writeState,
  type RunningCluster,
} from '../lab/cluster/cluster';
import { postgresLayout, stopPostgres } from '../host/server/postgres';
import { startClusterUi, type ClusterUi } from '../lab/cluster/ui';
import {
  clusterPorts,
  DEPLOYMENT_TASK_QUEUE,
  portOffsetFromEnv,
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_UI_VERSION,
} from '../lab/cluster/versions';
import { CODEC_KEYS_FILE_ENV } from '../src/codec/data-converter';
import { ensureCodecKeys, type CodecKeySource } from '../src/codec/demo-key';
import { DATA_DIR } from '../host/server/temporal-binaries';
import { prepareFirstRun, nextCommands } from '../lab/demo/first-run';
import { runEveryStrategy } from '../lab/demo/opening-failure';
import { startStack, type Stack } from '../lab/stack';
import { describeRows, renderTable } from '../lab/demo/table';
import { connectClient, TEMPORAL_TOKEN_FILE_ENV } from '../host/server/connection-config';
import { spawnWorker, type WorkerProcess } from '../lab/spawn-worker';
import { startStackConsole, type StackConsole } from '../console/stack-console';
import { DEFAULT_CONSOLE_PORT } from '../console/config';

const log = (m: string): void => {
  process.stderr.write(`${m}\n`);
};

export interface ClusterOptions {
  readonly workers: number;
  readonly once: boolean;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function bringUp(): Promise<{ cluster: RunningCluster; stack: Stack; keys: CodecKeySource }> {
  // Payloads are encrypted as in the demo: configured keys, or the demo key (src/codec/demo-key.ts).
  const keys = ensureCodecKeys(path.join(DATA_DIR, 'codec-demo-keys'));
  log(
    `cluster: payloads are encrypted with ${keys.kind === 'demo' ? `the demo key "${keys.keyId}"` : `key "${keys.keyId}" (LEDGERLOOP_CODEC_KEYS)`}`,
  );
  // Whose tokens the frontend accepts: the cluster's issuer, which the stack (workers, first-run tokens) uses too.
  const identity = await createClusterIdentity();
  const cluster = await startCluster(log, identity);
  const t = cluster.timings;
  log(
    `cluster: build ${seconds(t.buildMs)}, PostgreSQL ${seconds(t.postgresMs)}, schemas ${seconds(t.schemaMs)}, server ready ${seconds(t.serverMs)}`,
  );
  // The stack's client and services talk to the cluster's frontend (connectOrStart reads TEMPORAL_ADDRESS).
  process.env.TEMPORAL_ADDRESS = cluster.address;
  process.env.TEMPORAL_NAMESPACE = 'default';
  try {
    const stack = await startStack({
      name: 'cluster',
      dataDir: path.join(CLUSTER_DIR, 'stack'),
      services: ['inventory', 'shipping', 'orders', 'notifications'],
      identity: identity.issuer,
    });
    return { cluster, stack, keys };
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

/** A worker token for `queue`, kept fresh by the cluster: the file a worker host reads. */
function workerTokenFile(cluster: RunningCluster, name: string, queue: string): Promise<string> {
  const { credentials } = cluster.identity;
  return credentials.workerToken(path.join(credentials.dir, `worker-${name}.jwt`), queue);
}

async function once(): Promise<number> {
  const { cluster, stack } = await bringUp();
  try {
    // One queue for the three runs; their worker hosts may poll it and nothing else.
    const taskQueue = `cluster-opening-failure-${Date.now()}`;
    const temporalTokenFile = await workerTokenFile(cluster, 'opening-failure', taskQueue);
    const rows = await runEveryStrategy(stack, {
      prefix: 'cluster',
      taskQueue,
      onProgress: log,
      perStrategy: (strategy) => ({
        workerHost: (n) =>
          workerHost(stack, `${strategy}-${n}`, {
            transcriptUrl: cluster.transcriptUrl,
            temporalTokenFile,
            quotaUrl: cluster.quotaUrl,
          }),
        afterWorkerKill: async () => {
          const pid = cluster.serverPid();
          const { downMs } = await cluster.killAndRestartServer();
          log(
            `${strategy}: SIGKILLed the Temporal server (pid ${pid}); restarted on the same database, serving again after ${seconds(downMs)}`,
          );
        },
      }),
    });
    const report = describeRows(rows);
    process.stdout.write(`\n${renderTable(rows)}\n\n${report.sentences.join('\n')}\n`);
    if (report.violations.length > 0) {
      process.stdout.write(`\n${report.violations.map((v) => `!! ${v}`).join('\n')}\n`);
      return 1;
    }
    return 0;
  } finally {
    await stack.stop();
    await cluster.stop();
  }
}

async function up(workers: number): Promise<number> {
  const { cluster, stack, keys } = await bringUp();
  const hosts: { host: string; proc: WorkerProcess }[] = [];
  let ui: ClusterUi | undefined;
  let operatorConsole: StackConsole | undefined;
  try {
    const { uiServer } = await ensureUiBuild(log);
    const { credentials } = cluster.identity;
    ui = await startClusterUi(uiServer, path.join(CLUSTER_DIR, 'ui'), {
      frontend: cluster.address,
      port: cluster.ports.ui,
      serverBinary: cluster.build.server,
      viewerTokenFile: credentials.viewerTokenFile,
    });
    log(
      `cluster: Web UI ${TEMPORAL_UI_VERSION} at ${ui.url} as a viewer (through ${ui.gateway})${ui.codecUrl ? `, decoding payloads through the codec server at ${ui.codecUrl}` : ''}`,
    );
    for (let i = 1; i <= workers; i++) {
      const host = `worker-${i}`;
      const temporalTokenFile = await workerTokenFile(cluster, host, DEPLOYMENT_TASK_QUEUE);
      const proc = await spawnWorker({
        address: cluster.address,
        taskQueue: DEPLOYMENT_TASK_QUEUE,
        services: stack.serviceUrls,
        ...workerHost(stack, host, {
          transcriptUrl: cluster.transcriptUrl,
          temporalTokenFile,
          quotaUrl: cluster.quotaUrl,
        }),
      });
      hosts.push({ host, proc });
      log(`cluster: worker host ${host} (pid ${proc.pid}) polls task queue ${DEPLOYMENT_TASK_QUEUE}`);
    }
    writeState({
      pid: process.pid,
      address: cluster.address,
      ports: cluster.ports,
      services: stack.serviceUrls,
      ui: ui.url,
      gateway: ui.gateway,
      workers: hosts.map((h) => ({ host: h.host, pid: h.proc.pid })),
      startedAt: new Date().toISOString(),
    });
    // Something to charge and who may act: acme's acct_1, and tokens of the stack's issuer (valid 12 h, mode 0600).
    const first = await prepareFirstRun(stack, CLUSTER_DIR);
    log(
      `\ncluster up: Temporal ${TEMPORAL_SERVER_VERSION} at ${cluster.address} on PostgreSQL 127.0.0.1:${cluster.ports.postgres}; Web UI ${ui.url}; ${workers} worker host(s).`,
    );
    // The CLI decodes results with the same keys: the demo key's file, unless keys were configured.
    const rel = (p: string): string => path.relative(process.cwd(), p) || p;
    const codecEnv = keys.kind === 'demo' ? ` ${CODEC_KEYS_FILE_ENV}=${rel(keys.file)}` : '';
    // The read commands act as the cluster's viewer; start, approve, resolve and cancel as their --token.
    const viewerEnv = ` ${TEMPORAL_TOKEN_FILE_ENV}=${rel(credentials.viewerTokenFile)}`;
    log(
      `acme's acct_1 is seeded; tokens for alice (a starter), carol the approver and bob the operator are in ${first.tokensDir}; the frontend takes them, and a viewer's token for the read commands.`,
    );
    for (const line of nextCommands({
      env: `TEMPORAL_ADDRESS=${cluster.address}${codecEnv}${viewerEnv} `,
      tokensDir: first.tokensDir,
      devIssuerKey: first.devIssuerKey,
      uiUrl: ui.url,
    }))
      log(line);
    operatorConsole = await startStackConsole(stack, {
      port: DEFAULT_CONSOLE_PORT + portOffsetFromEnv(),
      uiUrl: ui.url,
    });
    log(operatorConsole.lines.join('\n'));
    log('Ctrl-C or `ledgerloop cluster down` stops it.');
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    return 0;
  } finally {
    log('cluster: stopping');
    await operatorConsole?.console?.close();
    await Promise.all(hosts.map((h) => h.proc.stop()));
    await ui?.stop();
    await stack.stop();
    await cluster.stop();
    clearState();
  }
}

async function down(): Promise<number> {
  const state = readState();
  if (state && alive(state.pid)) {
    process.kill(state.pid, 'SIGTERM');
    const end = Date.now() + 60_000;
    while (alive(state.pid) && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    if (alive(state.pid)) {
      log(`cluster: pid ${state.pid} did not stop within 60 s`);
      return 1;
    }
  }
  // PostgreSQL left running by a supervisor that died: stop it too.
  await stopPostgres(postgresLayout(CLUSTER_DIR, clusterPorts(portOffsetFromEnv()).postgres));
  clearState();
  log('cluster: down');
  return 0;
}

/**
 * What the Web UI answers: its settings (the codec endpoint it hands the browser), the runs it lists through the
 * frontend, and whether that codec server accepts the UI's origin and refuses another, as a browser would ask.
 */
async function uiStatus(url: string) {
  const get = (u: string) =>
    fetch(u, { signal: AbortSignal.timeout(5_000) }).then(
      (r) => (r.ok ? (r.json() as Promise<unknown>) : undefined),
      () => undefined,
    );
  const settings = (await get(`${url}/api/v1/settings`)) as { Codec?: { Endpoint?: string } } | undefined;
  const listed = (await get(`${url}/api/v1/namespaces/default/workflows`)) as { executions?: unknown[] } | undefined;
  const endpoint = settings?.Codec?.Endpoint ?? '';
  const decodeFrom = (origin: string) =>
    endpoint === ''
      ? Promise.resolve(0)
      : fetch(`${endpoint}/decode`, {
          method: 'POST',
          headers: { origin, 'content-type': 'application/json' },
          body: '{"payloads":[]}',
          signal: AbortSignal.timeout(5_000),
        }).then(
          (r) => r.status,
          () => 0,
        );
  return {
    url,
    answering: settings !== undefined,
    listsWorkflows: Array.isArray(listed?.executions),
    codec: {
      endpoint,
      acceptsTheUi: (await decodeFrom(new URL(url).origin)) === 200,
      refusesOtherOrigins: (await decodeFrom('http://attacker.invalid')) === 403,
    },
  };
}

async function status(): Promise<number> {
  const ports = clusterPorts(portOffsetFromEnv());
  const state = readState();
  const pg = await postgresReady(postgresLayout(CLUSTER_DIR, ports.postgres));
  let temporal = false;
  try {
    const { connection } = await connectClient({
      address: `127.0.0.1:${ports.frontend}`,
      namespace: 'default',
      connectTimeout: '2s',
    });
    await connection.workflowService.getSystemInfo({});
    await connection.close();
    temporal = true;
  } catch {
    temporal = false;
  }
  const services = await Promise.all(
    Object.entries(state?.services ?? {}).map(
      async ([name, url]) =>
        [
          name,
          await fetch(`${url}/health`).then(
            (r) => r.ok,
            () => false,
          ),
        ] as const,
    ),
  );
  const report = {
    supervisor: state ? { pid: state.pid, alive: alive(state.pid), startedAt: state.startedAt } : null,
    postgres: { port: ports.postgres, ready: pg },
    temporal: { address: `127.0.0.1:${ports.frontend}`, serving: temporal },
    ui: state?.ui ? await uiStatus(state.ui) : null,
    services: Object.fromEntries(services),
    workers: (state?.workers ?? []).map((w) => ({ ...w, alive: alive(w.pid) })),
    dataDir: CLUSTER_DIR,
    exists: fs.existsSync(CLUSTER_DIR),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  const uiOk =
    report.ui === null ||
    (report.ui.answering &&
      report.ui.listsWorkflows &&
      report.ui.codec.acceptsTheUi &&
      report.ui.codec.refusesOtherOrigins);
  return pg && temporal && uiOk ? 0 : 1;
}

export async function runCluster(action: string, opts: ClusterOptions): Promise<number> {
  if (!Number.isSafeInteger(opts.workers) || opts.workers < 1 || opts.workers > 16) {
    log(`ledgerloop cluster: --workers must be a whole number from 1 to 16, not ${String(opts.workers)}`);
    return 2;
  }
  if (opts.once) return once();
  switch (action) {
    case 'up':
      return up(opts.workers);
    case 'down':
      return down();
    case 'status':
      return status();
    default:
      log(`ledgerloop cluster: unknown action ${JSON.stringify(action).slice(0, 40)} (up, down or status)`);
      return 2;
  }
}
