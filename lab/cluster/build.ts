/**
 * The Temporal server and `temporal-sql-tool`, built from lab/cluster/server/ (our `main` with the frontend's
 * authorizer and claim mapper, on the pinned go.temporal.io/server module of its go.mod and go.sum) into
 * `.tools/temporal-server-<version>-ledgerloop/` (with the module's PostgreSQL schemas copied beside them), and
 * the Web UI server, built from its module into `.tools/temporal-ui-<version>/`. A second call finds them and
 * builds nothing; a change to the server's sources (their hash is kept beside the binary) rebuilds the server. A
 * fresh clone reuses the machine's Go module and build caches, so a rebuild is mostly linking. Needs `go` on PATH
 * (or in /usr/local/go/bin) and the Go module proxy.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { findExecutable, REPO_ROOT } from '../../host/server/temporal-binaries';
import {
  POSTGRES_SCHEMA_DIR,
  TEMPORAL_SERVER_MODULE,
  TEMPORAL_SERVER_VERSION,
  TEMPORAL_UI_MODULE,
  TEMPORAL_UI_VERSION,
} from './versions';

const run = promisify(execFile);

export class ClusterBuildError extends Error {
  override readonly name = 'ClusterBuildError';
}

export interface TemporalBuild {
  readonly server: string;
  readonly sqlTool: string;
  /** `schema/postgresql/v12` of the module: `temporal/versioned` and `visibility/versioned`. */
  readonly schemaDir: string;
  /** Whether this call built them (false: found from an earlier build). */
  readonly built: boolean;
  readonly ms: number;
}

export const BUILD_DIR = path.join(REPO_ROOT, '.tools', `temporal-server-${TEMPORAL_SERVER_VERSION}-ledgerloop`);

/** Our server `main` (a Go module of its own: go.mod pins go.temporal.io/server, go.sum every dependency). */
export const SERVER_SOURCE_DIR = path.join(REPO_ROOT, 'lab', 'cluster', 'server');

/** SHA-256 over the server module's files (not its tests): a different hash rebuilds the server. */
export function serverSourceHash(dir: string = SERVER_SOURCE_DIR): string {
  const h = createHash('sha256');
  for (const name of fs.readdirSync(dir).sort()) {
    if (!/^(go\.mod|go\.sum|.*\.go)$/.test(name) || name.endsWith('_test.go')) continue;
    h.update(`${name}\0`)
      .update(fs.readFileSync(path.join(dir, name)))
      .update('\0');
  }
  return h.digest('hex');
}

function goBinary(): string {
  const go = findExecutable('go', ['/usr/local/go/bin']);
  if (go === undefined)
    throw new ClusterBuildError(
      'go is not installed (looked on PATH and in /usr/local/go/bin): the cluster builds the Temporal server from its Go module',
    );
  return go;
}

function makeWritable(dir: string): void {
  fs.chmodSync(dir, 0o755);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) makeWritable(p);
    else fs.chmodSync(p, 0o644);
  }
}

/** A Go module at a pinned version and the commands to build from it, into `dir/bin`. */
interface GoBuild {
  readonly dir: string;
  readonly module: string;
  readonly version: string;
  /** Package path → binary name. */
  readonly commands: Readonly<Record<string, string>>;
}

/**
 * Builds the commands of a pinned Go module in a scratch module of its own (`dir/module`), reusing the machine's
 * Go module and build caches. Returns the module's directory in the module cache.
 */
async function goBuild(target: GoBuild, log: (line: string) => void): Promise<string> {
  const go = goBinary();
  const moduleDir = path.join(target.dir, 'module');
  fs.mkdirSync(moduleDir, { recursive: true });
  fs.writeFileSync(
    path.join(moduleDir, 'go.mod'),
    `module ledgerloop.local/build\n\ngo 1.24\n\nrequire ${target.module} v${target.version}\n`,
  );
  const imports = Object.keys(target.commands)
    .map((pkg) => `\t_ "${pkg}"\n`)
    .join('');
  fs.writeFileSync(
    path.join(moduleDir, 'tools.go'),
    `//go:build tools\n\n// Package tools pins the commands of the build.\npackage tools\n\nimport (\n${imports})\n`,
  );
  const env = { ...process.env, GOFLAGS: '-mod=mod -buildvcs=false' };
  const go$ = async (args: string[], what: string): Promise<string> => {
    try {
      const { stdout } = await run(go, args, { cwd: moduleDir, env, maxBuffer: 64 * 1024 * 1024 });
      return stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new ClusterBuildError(`${what} failed: ${(e.stderr ?? e.message).trim().split('\n').slice(-8).join('\n')}`);
    }
  };
  log(
    `cluster: building ${Object.values(target.commands).join(', ')} from ${target.module} v${target.version} (first time only)`,
  );
  await go$(['mod', 'tidy'], `go mod tidy (${target.module})`);
  for (const [pkg, name] of Object.entries(target.commands))
    await go$(['build', '-o', path.join(target.dir, 'bin', name), pkg], `go build (${name})`);
  return (await go$(['list', '-m', '-f', '{{.Dir}}', target.module], 'go list')).trim();
}

/** `go` in the server module's directory: its go.mod and go.sum as committed (`-mod=readonly`). */
async function goInServerModule(args: string[], what: string): Promise<string> {
  try {
    const { stdout } = await run(goBinary(), args, {
      cwd: SERVER_SOURCE_DIR,
      env: { ...process.env, GOFLAGS: '-mod=readonly -buildvcs=false' },
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new ClusterBuildError(`${what} failed: ${(e.stderr ?? e.message).trim().split('\n').slice(-8).join('\n')}`);
  }
}

/** The built binaries, building them first when they are missing or the server's sources changed. */
export async function ensureTemporalBuild(log: (line: string) => void = () => {}): Promise<TemporalBuild> {
  const started = Date.now();
  const pinned = `${TEMPORAL_SERVER_MODULE} v${TEMPORAL_SERVER_VERSION}`;
  if (!fs.readFileSync(path.join(SERVER_SOURCE_DIR, 'go.mod'), 'utf8').includes(`\t${pinned}\n`))
    throw new ClusterBuildError(
      `lab/cluster/server/go.mod does not require ${pinned} (deploy/deployment.json): run \`go get ${TEMPORAL_SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION} && go mod tidy\` there`,
    );
  const server = path.join(BUILD_DIR, 'bin', 'temporal-server');
  const sqlTool = path.join(BUILD_DIR, 'bin', 'temporal-sql-tool');
  const schemaDir = path.join(BUILD_DIR, 'schema', POSTGRES_SCHEMA_DIR);
  const stampFile = path.join(BUILD_DIR, 'server-source.sha256');
  const hash = serverSourceHash();
  const schemas = [path.join(schemaDir, 'temporal', 'versioned'), path.join(schemaDir, 'visibility', 'versioned')];
  const serverCurrent =
    fs.existsSync(server) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === hash;
  const restComplete = [sqlTool, ...schemas].every((p) => fs.existsSync(p));
  if (serverCurrent && restComplete) return { server, sqlTool, schemaDir, built: false, ms: Date.now() - started };
  fs.mkdirSync(path.join(BUILD_DIR, 'bin'), { recursive: true });
  if (!serverCurrent) {
    log(`cluster: building temporal-server (Temporal ${TEMPORAL_SERVER_VERSION} with Ledgerloop's authorizer)`);
    await goInServerModule(['build', '-o', server, '.'], 'go build (temporal-server)');
    fs.writeFileSync(stampFile, hash);
  }
  if (!restComplete) {
    log('cluster: building temporal-sql-tool and copying the PostgreSQL schemas');
    await goInServerModule(
      ['build', '-o', sqlTool, `${TEMPORAL_SERVER_MODULE}/cmd/tools/sql`],
      'go build (temporal-sql-tool)',
    );
    const moduleRoot = (
      await goInServerModule(['list', '-m', '-f', '{{.Dir}}', TEMPORAL_SERVER_MODULE], 'go list')
    ).trim();
    fs.rmSync(path.join(BUILD_DIR, 'schema'), { recursive: true, force: true });
    fs.cpSync(path.join(moduleRoot, 'schema', POSTGRES_SCHEMA_DIR), schemaDir, { recursive: true });
    // The module cache is read-only: make the copy writable so a later rebuild can replace it.
    makeWritable(path.join(BUILD_DIR, 'schema'));
  }
  log(`cluster: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { server, sqlTool, schemaDir, built: true, ms: Date.now() - started };
}

export const UI_BUILD_DIR = path.join(REPO_ROOT, '.tools', `temporal-ui-${TEMPORAL_UI_VERSION}`);

/** The Temporal Web UI server (its web assets are embedded in the binary), building it first when missing. */
export async function ensureUiBuild(
  log: (line: string) => void = () => {},
): Promise<{ readonly uiServer: string; readonly built: boolean; readonly ms: number }> {
  const started = Date.now();
  const uiServer = path.join(UI_BUILD_DIR, 'bin', 'temporal-ui-server');
  if (fs.existsSync(uiServer)) return { uiServer, built: false, ms: Date.now() - started };
  await goBuild(
    {
      dir: UI_BUILD_DIR,
      module: TEMPORAL_UI_MODULE,
      version: TEMPORAL_UI_VERSION,
      commands: { [`${TEMPORAL_UI_MODULE}/cmd/server`]: 'temporal-ui-server' },
    },
    log,
  );
  log(`cluster: Web UI server built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { uiServer, built: true, ms: Date.now() - started };
}
