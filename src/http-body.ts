/**
 * The one reader of HTTP request bodies, for every server in the repository (the downstream services, the codec
 * server, the lab's forwarders, the test servers): a hard size limit, and a typed `HttpBodyError` for a body that
 * is too large, empty or not JSON, or a request the client aborted. Each server maps the error to its own answer.
 */
import type http from 'node:http';

/** Why a body was refused. */
export const HttpBodyRefusal = {
  /** Larger than the limit (declared in Content-Length, or counted while reading). */
  TooLarge: 'Body.TooLarge',
  /** Empty or only white space, where JSON was expected. */
  Empty: 'Body.Empty',
  /** Not valid JSON. */
  NotJson: 'Body.NotJson',
  /** The client aborted the request before its body ended. */
  Aborted: 'Body.Aborted',
} as const;
export type HttpBodyRefusal = (typeof HttpBodyRefusal)[keyof typeof HttpBodyRefusal];

/** A request body that could not be read or parsed; `code` says why. */
export class HttpBodyError extends Error {
  override readonly name = 'HttpBodyError';
  constructor(
    readonly code: HttpBodyRefusal,
    message: string,
    /** The limit in force, for `Body.TooLarge`. */
    readonly limitBytes?: number,
  ) {
    super(message);
  }
}

export interface ReadBodyOptions {
  /** The largest body accepted, in bytes (a positive integer). */
  readonly limitBytes: number;
  /**
   * What happens to the rest of a body past the limit. `drain` (default): it is read and discarded without being
   * buffered, so the connection stays usable for the refusal (destroying the stream would reset the socket).
   * `destroy`: the request is destroyed at once.
   */
  readonly overLimit?: 'drain' | 'destroy';
}

/**
 * Reads the whole body. Rejects with `HttpBodyError` `Body.TooLarge` as soon as the body is known to exceed
 * `limitBytes` (from Content-Length, or while counting), `Body.Aborted` when the client aborts, and with the
 * stream's own error otherwise.
 */
export function readBody(req: http.IncomingMessage, opts: ReadBodyOptions): Promise<Buffer> {
  const { limitBytes } = opts;
  if (!Number.isInteger(limitBytes) || limitBytes <= 0) {
    throw new RangeError(`readBody: limitBytes must be a positive integer, got ${String(limitBytes)}`);
  }
  const tooLarge = (): HttpBodyError =>
    new HttpBodyError(HttpBodyRefusal.TooLarge, `request body exceeds ${limitBytes} bytes`, limitBytes);
  const refuseRest = (): void => {
    if (opts.overLimit === 'destroy') req.destroy();
    else req.resume();
  };
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limitBytes) {
      refuseRest();
      reject(tooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (chunk: Buffer | string) => {
      if (refused) return;
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += buf.length;
      if (size > limitBytes) {
        refused = true;
        chunks.length = 0;
        reject(tooLarge());
        if (opts.overLimit === 'destroy') req.destroy();
        return;
      }
      chunks.push(buf);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
    req.once('aborted', () => reject(new HttpBodyError(HttpBodyRefusal.Aborted, 'request aborted by the client')));
  });
}

/** Reads the whole body as UTF-8 text (see `readBody`). */
export async function readBodyText(req: http.IncomingMessage, opts: ReadBodyOptions): Promise<string> {
  return (await readBody(req, opts)).toString('utf8');
}

/**
 * Reads the body as JSON (see `readBody`). An empty (or white-space) body is `Body.Empty`, a body that does not
 * parse is `Body.NotJson`.
 */
export async function readJsonBody(req: http.IncomingMessage, opts: ReadBodyOptions): Promise<unknown> {
  return parseJsonBody(await readBodyText(req, opts));
}

function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new HttpBodyError(HttpBodyRefusal.Empty, 'request body is empty');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpBodyError(HttpBodyRefusal.NotJson, 'request body is not valid JSON');
  }
}
