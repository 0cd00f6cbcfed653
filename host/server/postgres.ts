/**
 * A private PostgreSQL from the machine's server binaries (no download): its own data directory, its own port on
 * 127.0.0.1, its socket in a directory only its owner can enter, and generated passwords for the `temporal` and
 * `ledgerloop` roles (a secrets file, mode 0600). The local cluster keeps it under `.data/cluster/pg` (lab/cluster);
 * `startTestPostgres` of ledgerloop/testing starts one in a test's own folder. `initdb` refuses to run as root, so
 * as root every PostgreSQL command runs as the `postgres` user, which then owns the data directory.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findExecutable } from './temporal-binaries';

const run = promisify(execFile);

/** A PostgreSQL binary is missing or one of its commands failed (its last lines of stderr, no secrets). */
export class PostgresServerError extends Error {
  override readonly name = 'PostgresServerError';
}

export interface PostgresLayout {
  readonly dataDir: string;
  readonly socketDir: string;
  readonly logFile: string;
  readonly port: number;
  readonly secretsFile: string;
}

export function postgresLayout(clusterDir: string, port: number): PostgresLayout {
  return {
    dataDir: path.join(clusterDir, 'pg', 'data'),
    socketDir: path.join(clusterDir, 'pg', 'run'),
    logFile: path.join(clusterDir, 'logs', 'postgres.log'),
    port,
    secretsFile: path.join(clusterDir, 'secrets.json'),
  };
}

const SEARCH = [
  '/usr/local/bin',
  '/usr/bin',
  ...['17', '16', '15', '14', '13'].map((v) => `/usr/lib/postgresql/${v}/bin`),
];

function pgBinary(name: 'initdb' | 'pg_ctl' | 'psql' | 'pg_isready'): string {
  const found = findExecutable(name, SEARCH);
  if (found === undefined)
    throw new PostgresServerError(
      `${name} not found (PATH, ${SEARCH.join(', ')}): install PostgreSQL (Debian: apt-get install postgresql)`,
    );
  return found;
}

const asRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** Runs a PostgreSQL command, as the `postgres` user when this process is root. */
async function pg(
  name: 'initdb' | 'pg_ctl' | 'psql' | 'pg_isready',
  args: string[],
  opts: { input?: string } = {},
): Promise<string> {
  const bin = pgBinary(name);
  const [cmd, argv] = asRoot() ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  try {
    if (opts.input !== undefined) {
      return await new Promise<string>((resolve, reject) => {
        const child = execFile(cmd, argv, { maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) =>
          err ? reject(Object.assign(err, { stderr })) : resolve(stdout),
        );
        child.stdin?.end(opts.input);
      });
    }
    const { stdout } = await run(cmd, argv, { maxBuffer: 8 * 1024 * 1024, cwd: os.tmpdir() });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new PostgresServerError(`${name} failed: ${(e.stderr || e.message).trim().split('\n').slice(-5).join('\n')}`);
  }
}

function ownByPostgres(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!asRoot()) return;
  const entry =
    fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('postgres:'))
      ?.split(':') ?? [];
  const uid = Number(entry[2]);
  const gid = Number(entry[3]);
  if (!Number.isSafeInteger(uid))
    throw new PostgresServerError('running as root, and there is no postgres user to run PostgreSQL as');
  fs.chownSync(dir, uid, gid);
  fs.chmodSync(dir, 0o700);
}

export interface ClusterSecrets {
  /** The `temporal` role: the Temporal server's persistence and visibility. */
  readonly temporalPassword: string;
  /** The `ledgerloop` role: the workers' shared transcript store (database `ledgerloop`). */
  readonly ledgerloopPassword: string;
}

/** The cluster's generated secrets, created on first use (mode 0600); a missing one is added. */
export function clusterSecrets(layout: PostgresLayout): ClusterSecrets {
  let known: Partial<ClusterSecrets> = {};
  try {
    known = JSON.parse(fs.readFileSync(layout.secretsFile, 'utf8')) as Partial<ClusterSecrets>;
  } catch {
    /* first use */
  }
  if (known.temporalPassword && known.ledgerloopPassword) return known as ClusterSecrets;
  const secrets: ClusterSecrets = {
    temporalPassword: known.temporalPassword ?? randomBytes(24).toString('base64url'),
    ledgerloopPassword: known.ledgerloopPassword ?? randomBytes(24).toString('base64url'),
  };
  fs.mkdirSync(path.dirname(layout.secretsFile), { recursive: true });
  fs.writeFileSync(layout.secretsFile, JSON.stringify(secrets), { mode: 0o600 });
  fs.chmodSync(layout.secretsFile, 0o600);
  return secrets;
}

/**
 * The URL of the workers' database `ledgerloop`: their shared transcript store (LEDGERLOOP_TRANSCRIPT_URL) and their
 * rate-limit windows (LEDGERLOOP_QUOTA_URL). It holds a password.
 */
export function transcriptUrl(layout: PostgresLayout): string {
  return `postgres://ledgerloop:${encodeURIComponent(clusterSecrets(layout).ledgerloopPassword)}@127.0.0.1:${layout.port}/ledgerloop`;
}

/** Creates the data directory (once) and starts the server; creates the `temporal` role and databases. */
export async function startPostgres(layout: PostgresLayout, log: (line: string) => void = () => {}): Promise<void> {
  fs.mkdirSync(path.dirname(layout.logFile), { recursive: true });
  if (!fs.existsSync(path.join(layout.dataDir, 'PG_VERSION'))) await initCluster(layout, log);
  ownByPostgres(layout.socketDir);
  // The log file must be writable by the server's user.
  fs.writeFileSync(layout.logFile, '', { flag: 'a' });
  if (asRoot()) fs.chmodSync(layout.logFile, 0o666);
  // One left running (a supervisor that died) is used as it is.
  if (!(await postgresReady(layout))) await serve(layout);
  await ensureRoles(layout, clusterSecrets(layout));
}

async function initCluster(layout: PostgresLayout, log: (line: string) => void): Promise<void> {
  ownByPostgres(path.dirname(layout.dataDir));
  ownByPostgres(layout.dataDir);
  log(`cluster: initdb ${layout.dataDir}`);
  // Local socket: only the owner can enter its directory. TCP on 127.0.0.1: passwords only.
  await pg('initdb', [
    '-D',
    layout.dataDir,
    '-U',
    'postgres',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '-E',
    'UTF8',
    '--no-instructions',
  ]);
}

async function serve(layout: PostgresLayout): Promise<void> {
  await pg('pg_ctl', [
    '-D',
    layout.dataDir,
    '-l',
    layout.logFile,
    '-w',
    '-t',
    '60',
    '-o',
    `-p ${layout.port} -k ${layout.socketDir} -c listen_addresses=127.0.0.1 -c max_connections=200`,
    'start',
  ]);
}

/** Runs `statement` as the superuser over the local socket, fed through stdin (so a password never is an argument). */
function superuserSql(layout: PostgresLayout, statement: string, db = 'postgres'): Promise<string> {
  return pg(
    'psql',
    [
      '-h',
      layout.socketDir,
      '-p',
      String(layout.port),
      '-U',
      'postgres',
      '-d',
      db,
      '-v',
      'ON_ERROR_STOP=1',
      '-qAt',
      '-f',
      '-',
    ],
    { input: statement },
  );
}

/** The `temporal` and `ledgerloop` roles with their passwords and databases, created or brought up to date. */
async function ensureRoles(layout: PostgresLayout, secrets: ClusterSecrets): Promise<void> {
  const sql = (statement: string) => superuserSql(layout, statement);
  // Passwords go through stdin, never a command line.
  const roles = [
    { role: 'temporal', password: secrets.temporalPassword, databases: ['temporal', 'temporal_visibility'] },
    { role: 'ledgerloop', password: secrets.ledgerloopPassword, databases: ['ledgerloop'] },
  ];
  for (const { role, password, databases } of roles) {
    const hasRole = (await sql(`SELECT 1 FROM pg_roles WHERE rolname = '${role}'`)).trim() === '1';
    const pw = password.replace(/'/g, "''");
    await sql(
      hasRole ? `ALTER ROLE ${role} WITH LOGIN PASSWORD '${pw}'` : `CREATE ROLE ${role} WITH LOGIN PASSWORD '${pw}'`,
    );
    for (const db of databases) {
      const exists = (await sql(`SELECT 1 FROM pg_database WHERE datname = '${db}'`)).trim() === '1';
      if (!exists) await sql(`CREATE DATABASE ${db} OWNER ${role}`);
    }
  }
}

/** Whether the server accepts connections. */
export async function postgresReady(layout: PostgresLayout): Promise<boolean> {
  try {
    await pg('pg_isready', ['-h', layout.socketDir, '-p', String(layout.port), '-q']);
    return true;
  } catch {
    return false;
  }
}

export async function stopPostgres(layout: PostgresLayout): Promise<void> {
  if (!fs.existsSync(path.join(layout.dataDir, 'postmaster.pid'))) return;
  await pg('pg_ctl', ['-D', layout.dataDir, '-m', 'fast', '-w', 'stop']);
}
