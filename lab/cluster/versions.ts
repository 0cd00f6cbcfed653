/**
 * What a Ledgerloop deployment runs, read from its one source, `deploy/deployment.json`: the Temporal server and
 * Web UI versions, the ports, the task queue and the environment each process needs. `docker-compose.yml` states
 * the same things for containers; `scripts/check-compose.sh` fails when the two drift. The local cluster
 * (`npm run cluster`) listens on the same ports shifted by one offset, so it never collides with a dev server.
 */
import deployment from '../../deploy/deployment.json';

/** The Temporal server: the compose file's `temporalio/server` and `temporalio/admin-tools` tags. */
export const TEMPORAL_SERVER_VERSION: string = deployment.versions.temporalServer;

/** The Temporal Web UI server: the compose file's `temporalio/ui` tag. */
export const TEMPORAL_UI_VERSION: string = deployment.versions.temporalUi;

/** The Go modules the cluster builds the server, `temporal-sql-tool` and the Web UI server from. */
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';
export const TEMPORAL_UI_MODULE = 'github.com/temporalio/ui-server/v2';

/** The PostgreSQL plugin and schema folder of the server for PostgreSQL 12 and later. */
export const POSTGRES_PLUGIN = 'postgres12';
export const POSTGRES_SCHEMA_DIR = 'postgresql/v12';

/** The namespace every run uses, and the task queue the deployment's workers poll. */
export const CLUSTER_NAMESPACE: string = deployment.namespace;
export const DEPLOYMENT_TASK_QUEUE: string = deployment.taskQueue;

export type PortName = keyof typeof deployment.ports;
export type ClusterPorts = { readonly [K in PortName]: number };

/** The deployment's ports, as compose uses them. */
export const DEPLOYMENT_PORTS: ClusterPorts = deployment.ports;

/**
 * The environment each kind of process must be given (an entry `A|B`: either variable), checked against the
 * compose file by scripts/check-compose.sh and against the cluster's worker hosts by test/unit/cluster-config.
 */
export const REQUIRED_ENV: { readonly [K in keyof typeof deployment.env]: readonly string[] } = deployment.env;

/** Whether `env` satisfies every entry of `required`; the entries it misses. */
export function missingEnv(required: readonly string[], env: Readonly<Record<string, string | undefined>>): string[] {
  return required.filter((entry) => !entry.split('|').some((name) => (env[name] ?? '') !== ''));
}

export const DEFAULT_PORT_OFFSET = 10_000;
export const PORT_OFFSET_ENV = 'LEDGERLOOP_CLUSTER_PORT_OFFSET';

/** Every port of the local cluster: the deployment's port plus one offset. */
export function clusterPorts(offset = DEFAULT_PORT_OFFSET): ClusterPorts {
  const ports = Object.fromEntries(Object.entries(DEPLOYMENT_PORTS).map(([k, p]) => [k, p + offset])) as Record<
    PortName,
    number
  >;
  const values = Object.values(ports);
  if (!Number.isSafeInteger(offset) || Math.min(...values) < 1024 || Math.max(...values) > 65_535) {
    throw new RangeError(
      `cluster port offset ${offset} puts a port outside 1024..65535 (ports ${Math.min(...values)}..${Math.max(...values)})`,
    );
  }
  // Temporal's PostgreSQL schema keeps a membership port in a smallint: past 32767 the server exits at start-up.
  for (const [name, port] of Object.entries(ports))
    if (name.endsWith('Membership') && port > MAX_MEMBERSHIP_PORT)
      throw new RangeError(
        `cluster port offset ${offset} puts ${name} ${port} past ${MAX_MEMBERSHIP_PORT} (Temporal stores membership ports as a smallint)`,
      );
  return ports;
}

/** The highest membership port Temporal's PostgreSQL schema can store (cluster_membership.rpc_port, a smallint). */
const MAX_MEMBERSHIP_PORT = 32_767;

export function portOffsetFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[PORT_OFFSET_ENV];
  if (raw === undefined || raw === '') return DEFAULT_PORT_OFFSET;
  const n = Number(raw);
  if (!Number.isSafeInteger(n))
    throw new RangeError(`${PORT_OFFSET_ENV} must be a whole number, not ${raw.slice(0, 20)}`);
  return n;
}
