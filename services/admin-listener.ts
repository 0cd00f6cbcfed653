/**
 * The admin listener: a second HTTP server of a service for seeding, evidence (stats, refusal counters) and, in a
 * lab start only, fault injection. It is off unless `--admin-port N` (or `LEDGERLOOP_ADMIN_PORT`) enables it,
 * always bound to 127.0.0.1, and every request must carry `Authorization: Bearer <LEDGERLOOP_ADMIN_TOKEN>`
 * (compared in constant time; at least 32 characters) and come from a loopback peer.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { DownstreamErrorCode } from '../src/downstream/protocol';
import { closeServer, createHttpServer, errorJson, listen, type Router } from './http-kit';

/** The environment variable holding the admin bearer token. */
export const ADMIN_TOKEN_ENV = 'LEDGERLOOP_ADMIN_TOKEN';
/** The environment variable that enables the admin listener on a port (like `--admin-port`). */
export const ADMIN_PORT_ENV = 'LEDGERLOOP_ADMIN_PORT';
/** Shortest admin token accepted: 32 characters (e.g. 24 random bytes in base64url). */
export const MIN_ADMIN_TOKEN_CHARS = 32;
/** The only interface the admin listener binds. */
export const ADMIN_HOST = '127.0.0.1';

/** How the admin listener runs. */
export interface AdminConfig {
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  readonly port: number;
  readonly token: string;
  /** Lab start: a fault injector exists and its routes are served (here only). Default false. */
  readonly lab: boolean;
}

/** A start refused for its configuration (missing keys, a weak admin token): a typed code in the message. */
export class ServiceConfigError extends Error {
  override readonly name = 'ServiceConfigError';
  constructor(
    readonly code:
      'Service.KeysMissing' | 'Service.AdminTokenMissing' | 'Service.LabWithoutAdmin' | 'Service.ReadUnscoped',
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

/** Throws unless `token` is a usable admin token. */
export function checkAdminToken(token: string | undefined): string {
  if (token === undefined || token.length < MIN_ADMIN_TOKEN_CHARS) {
    throw new ServiceConfigError(
      'Service.AdminTokenMissing',
      `the admin listener needs ${ADMIN_TOKEN_ENV} (at least ${MIN_ADMIN_TOKEN_CHARS} characters)`,
    );
  }
  return token;
}

/** Whether the request's `Authorization` is `Bearer <token>`, compared in constant time (over SHA-256 digests). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = header?.startsWith('Bearer ') === true ? header.slice('Bearer '.length) : '';
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b) && given.length > 0;
}

/** Whether a peer address is loopback (IPv4 127/8, IPv6 ::1, or IPv4-mapped loopback). */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** A running admin listener. */
export interface AdminListener {
  readonly url: string;
  readonly port: number;
  /** The address the socket is bound to, as the OS reports it (always 127.0.0.1). */
  readonly boundAddress: string;
  close(): Promise<void>;
}

/** Starts the admin listener for `router` on 127.0.0.1:`config.port`, guarded by the token and a loopback check. */
export async function startAdminListener(router: Router, config: AdminConfig): Promise<AdminListener> {
  const token = checkAdminToken(config.token);
  // The guards stand in front of the router: no admin route (and no body limit) sees a request that fails them.
  const server = createHttpServer((request, env) => {
    if (!isLoopback(env.incoming.socket.remoteAddress))
      return errorJson(403, DownstreamErrorCode.AdminNotLoopback, 'admin routes answer loopback peers only');
    if (!bearerMatches(request.headers.get('authorization') ?? undefined, token))
      return errorJson(
        401,
        DownstreamErrorCode.AdminUnauthorized,
        'admin routes need the admin bearer token',
        {},
        {
          'www-authenticate': 'Bearer',
        },
      );
    return router.fetch(request, env);
  });
  const port = await listen(server, config.port, ADMIN_HOST);
  const address = server.address();
  const boundAddress = address !== null && typeof address !== 'string' ? address.address : '';
  return { url: `http://${ADMIN_HOST}:${port}`, port, boundAddress, close: () => closeServer(server) };
}
