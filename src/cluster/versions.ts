/**
 * The one source of what a Ledgerloop deployment runs: the Temporal server version, the PostgreSQL major, and the
 * ports the local cluster (`npm run cluster`) listens on. `docker-compose.yml` names the same versions;
 * `scripts/check-compose.sh` fails when the two drift.
 */

/** The Temporal server: the compose file's `temporalio/server` and `temporalio/admin-tools` tags. */
export const TEMPORAL_SERVER_VERSION = '1.32.0';

/** The Go module the cluster builds the server and `temporal-sql-tool` from. */
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';

/** The PostgreSQL plugin and schema folder of the server for PostgreSQL 12 and later. */
export const POSTGRES_PLUGIN = 'postgres12';
export const POSTGRES_SCHEMA_DIR = 'postgresql/v12';

/** The namespace every run uses. */
export const CLUSTER_NAMESPACE = 'default';

/** Every port of the local cluster, from one base (`LEDGERLOOP_CLUSTER_PORT_BASE`, default 17000). */
export interface ClusterPorts {
  readonly postgres: number;
  readonly frontend: number;
  readonly frontendHttp: number;
  readonly history: number;
  readonly matching: number;
  readonly worker: number;
  readonly frontendMembership: number;
  readonly historyMembership: number;
  readonly matchingMembership: number;
  readonly workerMembership: number;
}

export const DEFAULT_PORT_BASE = 17_000;

export function clusterPorts(base = DEFAULT_PORT_BASE): ClusterPorts {
  if (!Number.isSafeInteger(base) || base < 1024 || base > 64_000) throw new RangeError(`cluster port base ${base} is not within 1024..64000`);
  return {
    postgres: base + 432,
    frontend: base + 233,
    frontendHttp: base + 243,
    history: base + 234,
    matching: base + 235,
    worker: base + 239,
    frontendMembership: base + 933,
    historyMembership: base + 934,
    matchingMembership: base + 935,
    workerMembership: base + 939,
  };
}

export function portBaseFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['LEDGERLOOP_CLUSTER_PORT_BASE'];
  if (raw === undefined || raw === '') return DEFAULT_PORT_BASE;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new RangeError(`LEDGERLOOP_CLUSTER_PORT_BASE must be a whole number, not ${raw.slice(0, 20)}`);
  return n;
}
