/**
 * The Temporal server and `temporal-sql-tool`, built once from their Go module into
 * `.tools/temporal-server-<version>/` (with the module's PostgreSQL schemas copied beside them). A second call
 * finds them and builds nothing; a fresh clone reuses the machine's Go module and build caches, so a rebuild is
 * mostly linking. Needs `go` on PATH (or in /usr/local/go/bin) and the Go module proxy.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { findExecutable, REPO_ROOT } from '../server/temporal-binaries';
import { POSTGRES_SCHEMA_DIR, TEMPORAL_SERVER_MODULE, TEMPORAL_SERVER_VERSION } from './versions';

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

export const BUILD_DIR = path.join(REPO_ROOT, '.tools', `temporal-server-${TEMPORAL_SERVER_VERSION}`);

function goBinary(): string {
  const go = findExecutable('go', ['/usr/local/go/bin']);
  if (go === undefined) throw new ClusterBuildError('go is not installed (looked on PATH and in /usr/local/go/bin): the cluster builds the Temporal server from its Go module');
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

/** The built binaries, building them first when they are missing. */
export async function ensureTemporalBuild(log: (line: string) => void = () => {}): Promise<TemporalBuild> {
  const started = Date.now();
  const server = path.join(BUILD_DIR, 'bin', 'temporal-server');
  const sqlTool = path.join(BUILD_DIR, 'bin', 'temporal-sql-tool');
  const schemaDir = path.join(BUILD_DIR, 'schema', POSTGRES_SCHEMA_DIR);
  const complete = [server, sqlTool, path.join(schemaDir, 'temporal', 'versioned'), path.join(schemaDir, 'visibility', 'versioned')].every((p) => fs.existsSync(p));
  if (complete) return { server, sqlTool, schemaDir, built: false, ms: Date.now() - started };

  const go = goBinary();
  const moduleDir = path.join(BUILD_DIR, 'module');
  fs.mkdirSync(moduleDir, { recursive: true });
  fs.writeFileSync(path.join(moduleDir, 'go.mod'), `module ledgerloop.local/temporal-build\n\ngo 1.24\n\nrequire ${TEMPORAL_SERVER_MODULE} v${TEMPORAL_SERVER_VERSION}\n`);
  fs.writeFileSync(
    path.join(moduleDir, 'tools.go'),
    `//go:build tools\n\n// Package tools pins the Temporal server's commands for the build.\npackage tools\n\nimport (\n\t_ "${TEMPORAL_SERVER_MODULE}/cmd/server"\n\t_ "${TEMPORAL_SERVER_MODULE}/cmd/tools/sql"\n)\n`,
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
  log(`cluster: building Temporal server ${TEMPORAL_SERVER_VERSION} and temporal-sql-tool from ${TEMPORAL_SERVER_MODULE} (first time only)`);
  await go$(['mod', 'tidy'], 'go mod tidy');
  await go$(['build', '-o', server, `${TEMPORAL_SERVER_MODULE}/cmd/server`], 'go build (server)');
  await go$(['build', '-o', sqlTool, `${TEMPORAL_SERVER_MODULE}/cmd/tools/sql`], 'go build (temporal-sql-tool)');
  const moduleRoot = (await go$(['list', '-m', '-f', '{{.Dir}}', TEMPORAL_SERVER_MODULE], 'go list')).trim();
  fs.rmSync(path.join(BUILD_DIR, 'schema'), { recursive: true, force: true });
  fs.cpSync(path.join(moduleRoot, 'schema', POSTGRES_SCHEMA_DIR), schemaDir, { recursive: true });
  // The module cache is read-only: make the copy writable so a later rebuild can replace it.
  makeWritable(path.join(BUILD_DIR, 'schema'));
  log(`cluster: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { server, sqlTool, schemaDir, built: true, ms: Date.now() - started };
}
