/**
 * The Temporal server of the local cluster: persistence and visibility on the cluster's PostgreSQL, schemas
 * applied with `temporal-sql-tool`, every service (frontend, internal frontend, history, matching, worker) in one
 * process on the cluster's ports, then the `default` namespace and the project's search attributes registered.
 *
 * The server is ours (lab/cluster/server/): its frontend verifies each caller's identity token against the
 * cluster's identity issuers (public keys only, the server's own copy) and authorizes each call. The server's own
 * worker service reaches the frontend API through the internal frontend, which vouches for the server's services
 * and listens on loopback like history and matching: a process on this machine that reaches those ports directly
 * bypasses the frontend (compose closes that with internode mTLS under a CA of its own).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { msToTs } from '@temporalio/common/lib/time';
import { connectClient } from '../../host/server/connection-config';
import { REPO_ROOT } from '../../host/server/temporal-binaries';
import { ensureSearchAttributes } from '../../host/server/dev-server';
import type { TemporalBuild } from './build';
import type { PostgresLayout } from '../../host/server/postgres';
import { CLUSTER_NAMESPACE, POSTGRES_PLUGIN, type ClusterPorts } from './versions';

const run = promisify(execFile);

export class ClusterServerError extends Error {
  override readonly name = 'ClusterServerError';
}

/** The server's configuration (YAML is a superset of JSON, so it is written as JSON). */
export function serverConfig(
  ports: ClusterPorts,
  password: string,
  dynamicConfigFile: string,
): Record<string, unknown> {
  const datastore = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: POSTGRES_PLUGIN,
      databaseName,
      connectAddr: `127.0.0.1:${ports.postgres}`,
      connectProtocol: 'tcp',
      user: 'temporal',
      password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...extra },
  });
  return {
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: 4,
      datastores: {
        'postgres-default': datastore('temporal', 20),
        'postgres-visibility': datastore('temporal_visibility', 4),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: {
      frontend: service(ports.frontend, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: service(ports.history, ports.historyMembership),
      matching: service(ports.matching, ports.matchingMembership),
      worker: service(ports.worker, ports.workerMembership),
      'internal-frontend': service(ports.internalFrontend, ports.internalFrontendMembership, {
        httpPort: ports.internalFrontendHttp,
      }),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${ports.frontend}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '10s' },
  };
}

/** The server's dynamic config: the compose deployment's file, so both deployments run with the same settings. */
export const DYNAMIC_CONFIG_FILE = path.join(REPO_ROOT, 'deploy', 'temporal', 'dynamicconfig', 'ledgerloop.yaml');

/** Applies (or brings up to date) both schemas; idempotent. */
export async function applySchemas(build: TemporalBuild, pgLayout: PostgresLayout, password: string): Promise<void> {
  for (const [db, folder] of [
    ['temporal', 'temporal'],
    ['temporal_visibility', 'visibility'],
  ] as const) {
    const env = {
      ...process.env,
      SQL_HOST: '127.0.0.1',
      SQL_PORT: String(pgLayout.port),
      SQL_USER: 'temporal',
      SQL_PASSWORD: password,
      SQL_DATABASE: db,
      SQL_PLUGIN: POSTGRES_PLUGIN,
    };
    const tool = async (args: string[]) => {
      try {
        await run(build.sqlTool, args, { env, maxBuffer: 8 * 1024 * 1024 });
      } catch (err) {
        const e = err as { stderr?: string; message: string };
        throw new ClusterServerError(
          `temporal-sql-tool ${args[0]} (${db}) failed: ${(e.stderr || e.message).trim().split('\n').slice(-4).join('\n')}`,
        );
      }
    };
    // setup-schema -v 0.0 creates the version table (a no-op error when it exists is tolerated by update-schema).
    await tool(['setup-schema', '-v', '0.0']).catch((err: Error) => {
      if (!/already exists/i.test(err.message)) throw err;
    });
    await tool(['update-schema', '-d', path.join(build.schemaDir, folder, 'versioned')]);
  }
}

export interface ServerFiles {
  readonly configFile: string;
  readonly logFile: string;
  /** The server's copy of the identity issuers (public keys only): whose tokens its frontend accepts. */
  readonly issuersFile: string;
}

/** Writes the configuration (mode 0600: it holds the database password) and the server's copy of the issuers. */
export function writeServerFiles(
  clusterDir: string,
  ports: ClusterPorts,
  password: string,
  issuers: string,
): ServerFiles {
  const dir = path.join(clusterDir, 'temporal');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const issuersFile = path.join(dir, 'identity-issuers.json');
  fs.copyFileSync(issuers, issuersFile);
  const configFile = path.join(dir, 'config.yaml');
  fs.writeFileSync(configFile, JSON.stringify(serverConfig(ports, password, DYNAMIC_CONFIG_FILE), null, 2), {
    mode: 0o600,
  });
  fs.chmodSync(configFile, 0o600);
  fs.mkdirSync(path.join(clusterDir, 'logs'), { recursive: true });
  return { configFile, logFile: path.join(clusterDir, 'logs', 'temporal-server.log'), issuersFile };
}

/** The server's environment: this process's, less any Temporal credential, plus whose tokens to accept. */
export function serverEnv(files: ServerFiles, inherited: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...inherited };
  for (const name of ['LEDGERLOOP_TEMPORAL_TOKEN_FILE', 'TEMPORAL_API_KEY']) delete env[name];
  return {
    ...env,
    LEDGERLOOP_IDENTITY_ISSUERS: files.issuersFile,
    LEDGERLOOP_FRONTEND_NAMESPACE: CLUSTER_NAMESPACE,
  };
}

/** Starts the server process (its output appended to the log file). */
export function spawnServer(build: TemporalBuild, files: ServerFiles, opts: { detached?: boolean } = {}): ChildProcess {
  const out = fs.openSync(files.logFile, 'a');
  const child = spawn(build.server, ['--config-file', files.configFile, 'start'], {
    stdio: ['ignore', out, out],
    env: serverEnv(files),
    detached: opts.detached === true,
  });
  fs.closeSync(out);
  return child;
}

/** Waits until the frontend answers, then registers the namespace and the search attributes. */
export async function prepareNamespace(address: string, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const { connection } = await connectClient({ address, namespace: CLUSTER_NAMESPACE, connectTimeout: '2s' });
      try {
        try {
          await connection.workflowService.registerNamespace({
            namespace: CLUSTER_NAMESPACE,
            workflowExecutionRetentionPeriod: msToTs('3 days'),
          });
        } catch (err) {
          if (
            !/already exists/i.test(`${(err as Error).message} ${String((err as { details?: unknown }).details ?? '')}`)
          )
            throw err;
        }
        await connection.workflowService.describeNamespace({ namespace: CLUSTER_NAMESPACE });
      } finally {
        await connection.close();
      }
      await ensureSearchAttributes(address, CLUSTER_NAMESPACE);
      return;
    } catch (err) {
      last = (err as Error).message;
      if (Date.now() > end)
        throw new ClusterServerError(`the Temporal server at ${address} did not become ready: ${last}`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}
