/**
 * Who the local cluster's own processes are at its frontend: tokens of the cluster's development issuer, one file
 * each (mode 0600), minted short-lived and minted again before they expire, as an identity provider's sidecar
 * would. The processes read their file through LEDGERLOOP_TEMPORAL_TOKEN_FILE (host/server/connection-config.ts),
 * which re-reads it when it changes: a refresh that did not reach a worker would show as refused polls.
 *
 * - `admin.jwt`: the supervisor (namespace, search attributes, starting the lab's runs, the fault lab and the CI
 *   checks it runs against the cluster);
 * - `viewer.jwt`: the Web UI's gateway, and the read commands `cluster up` prints;
 * - `<host>/temporal.jwt`: a worker host's `worker:<queue>` token, for the queue it polls and nothing else.
 *
 * Everything runs as one OS user here: the files separate what each process is given, not what it could read.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DevIssuer } from '../../src/identity/issue';

/** Tokens live this long; a new one is written every `REFRESH_EVERY_MS`, well before the old one expires. */
export const TOKEN_TTL_SEC = 10 * 60;
export const REFRESH_EVERY_MS = 3 * 60_000;

/** The cluster supervisor's principal and tenant in its tokens. */
const SYSTEM_TENANT = 'cluster';

export interface ClusterCredentials {
  readonly dir: string;
  readonly adminTokenFile: string;
  readonly viewerTokenFile: string;
  /** Writes (and keeps fresh) a worker token for `queue` in `file`; returns `file`. */
  workerToken(file: string, queue: string): Promise<string>;
  /** Mints every token again now (the timer does it every REFRESH_EVERY_MS). */
  refresh(): Promise<void>;
  stop(): void;
}

interface Minted {
  readonly file: string;
  readonly principal: string;
  readonly roles: readonly string[];
}

function writePrivate(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  // Write beside and rename: a reader sees the old token or the new one, never half of one.
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

export async function createClusterCredentials(
  dir: string,
  issuer: DevIssuer,
  opts: { readonly ttlSec?: number; readonly refreshEveryMs?: number } = {},
): Promise<ClusterCredentials> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  const ttlSec = opts.ttlSec ?? TOKEN_TTL_SEC;
  const minted: Minted[] = [
    { file: path.join(dir, 'admin.jwt'), principal: 'ops:cluster-admin', roles: ['admin'] },
    { file: path.join(dir, 'viewer.jwt'), principal: 'ops:cluster-viewer', roles: ['viewer'] },
  ];
  const mint = async (m: Minted): Promise<void> =>
    writePrivate(m.file, await issuer.issue(m.principal, SYSTEM_TENANT, m.roles, { ttlSec }));
  const refresh = async (): Promise<void> => {
    for (const m of minted) await mint(m);
  };
  await refresh();
  const timer = setInterval(() => {
    refresh().catch((err: unknown) => process.stderr.write(`cluster: token refresh failed: ${String(err)}\n`));
  }, opts.refreshEveryMs ?? REFRESH_EVERY_MS);
  timer.unref();
  return {
    dir,
    adminTokenFile: minted[0]!.file,
    viewerTokenFile: minted[1]!.file,
    async workerToken(file, queue) {
      const m: Minted = { file, principal: `worker:${path.basename(path.dirname(file))}`, roles: [`worker:${queue}`] };
      await mint(m);
      const known = minted.findIndex((x) => x.file === file);
      if (known >= 0) minted[known] = m;
      else minted.push(m);
      return file;
    },
    refresh,
    stop: () => clearInterval(timer),
  };
}
