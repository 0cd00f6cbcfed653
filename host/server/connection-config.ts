/**
 * Every connection to Temporal (client, CLI, workers, fault runner, bench) is configured here, through
 * `@temporalio/envconfig`: a profile from a TOML file (`TEMPORAL_CONFIG_FILE`, else the user's
 * `temporalio/temporal.toml`; `TEMPORAL_PROFILE` picks the profile, default `default`) with the standard variables
 * on top (`TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS`, `TEMPORAL_TLS_CLIENT_CERT_PATH`
 * / `_DATA`, `TEMPORAL_TLS_CLIENT_KEY_PATH` / `_DATA`, `TEMPORAL_TLS_SERVER_CA_CERT_PATH` / `_DATA`,
 * `TEMPORAL_TLS_SERVER_NAME`, `TEMPORAL_GRPC_META_*`), then the caller's explicit overrides (a `--address` flag).
 *
 * Fail closed: a named config file that does not exist, a client certificate without its key (or the reverse), and
 * an API key sent without TLS to a non-loopback address are refused instead of silently connecting without them.
 *
 * `local: true` is for a dev server this process started itself on loopback: no profile and no credentials are
 * used (an API key meant for a cloud namespace is never sent to a local child process).
 *
 * A frontend that authorizes with Ledgerloop's identities (the cluster's and compose's Temporal server,
 * lab/cluster/server/) takes an identity token as `authorization: Bearer <token>`:
 * - `LEDGERLOOP_TEMPORAL_TOKEN_FILE` names a file holding the process's token (a worker's `worker:<queue>` token,
 *   a viewer's, an admin's). It is read again whenever it changes: a client reads it at most once a second, a
 *   worker's connection is given the new token within `TOKEN_FILE_CHECK_MS` (tokens expire; whoever issues them
 *   rewrites the file before they do).
 * - a command that acts as someone (`start`, `approve`, `resolve`, `cancel` with `--token`) passes that token as
 *   `bearerToken`: it is the credential for that command, over the token file.
 * A Temporal API key (`TEMPORAL_API_KEY`, a profile's `api_key`) is a different credential (Temporal Cloud): a
 * token file beside it is refused as ambiguous, and an actor's token never replaces it. A token does not switch TLS
 * on (the local cluster is plaintext on loopback), but a token file is refused for a plaintext non-loopback
 * address, and an actor's token is not sent there. Without either, nothing changes: no `authorization` header.
 */
import fs from 'node:fs';
import { Connection } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { loadClientConfigProfile, type ClientConfigProfile, type ClientConfigTLS } from '@temporalio/envconfig';
import type { NativeConnection } from '@temporalio/worker';
import { configValue } from '../../src/config';
import { tokenFileSource, watchTokenFile, type TokenFileSource } from './frontend-token';

export const DEFAULT_ADDRESS = '127.0.0.1:7233';
/** The file holding this process's identity token for a frontend that authorizes. */
export const TEMPORAL_TOKEN_FILE_ENV = 'LEDGERLOOP_TEMPORAL_TOKEN_FILE';
export const DEFAULT_NAMESPACE = 'default';

type Env = Readonly<Record<string, string | undefined>>;

/** What a caller knows better than the environment. */
export interface ConnectionOverrides {
  /** host:port; wins over the profile and TEMPORAL_ADDRESS. */
  readonly address?: string;
  /** Wins over the profile and TEMPORAL_NAMESPACE. */
  readonly namespace?: string;
  /** A dev server this process started on loopback: ignore profiles and credentials. Needs `address`. */
  readonly local?: boolean;
  /** Passed to the connection (e.g. `'5s'`). */
  readonly connectTimeout?: Duration;
  /**
   * The identity token of whoever this call acts as (a command's `--token`): sent as the bearer token, over
   * LEDGERLOOP_TEMPORAL_TOKEN_FILE. Ignored beside a Temporal API key and on a plaintext non-loopback address.
   */
  readonly bearerToken?: string;
}

/** Where the identity token for an authorizing frontend comes from (never the token itself, except `actor`). */
export type FrontendCredential =
  { readonly kind: 'token-file'; readonly path: string } | { readonly kind: 'actor'; readonly token: string };

/** TLS as both connection classes take it. */
export interface ResolvedTls {
  readonly serverNameOverride?: string;
  readonly serverRootCACertificate?: Buffer;
  readonly clientCertPair?: { readonly crt: Buffer; readonly key: Buffer };
}

/** The merged configuration, before connecting. */
export interface ResolvedConnectionConfig {
  readonly address: string;
  readonly namespace: string;
  readonly apiKey?: string;
  /** `undefined`/`false`: plaintext; `true`: TLS with the system roots; an object: TLS (mTLS with `clientCertPair`). */
  readonly tls?: boolean | ResolvedTls;
  readonly metadata?: Record<string, string>;
  /** The identity token sent to a frontend that authorizes (LEDGERLOOP_TEMPORAL_TOKEN_FILE or an actor's). */
  readonly credential?: FrontendCredential;
  /** Which profile was used (undefined for `local`). */
  readonly profile?: string;
}

/** A configuration that would connect without the security it asked for. */
export class ConnectionConfigError extends Error {
  override readonly name = 'ConnectionConfigError';
}

function definedEnv(env: Env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

function dataOf(source: ClientConfigTLS['clientCert'], what: string): Buffer | undefined {
  if (!source) return undefined;
  if ('path' in source) {
    try {
      return fs.readFileSync(source.path);
    } catch (err) {
      throw new ConnectionConfigError(
        `${what}: cannot read ${source.path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  return Buffer.from(source.data);
}

function tlsOf(profile: ClientConfigProfile): boolean | ResolvedTls | undefined {
  const t = profile.tls;
  if (t === undefined) return profile.apiKey !== undefined ? true : undefined;
  if (t.disabled === true) return false;
  const crt = dataOf(t.clientCert, 'TLS client certificate');
  const key = dataOf(t.clientKey, 'TLS client key');
  if ((crt === undefined) !== (key === undefined)) {
    throw new ConnectionConfigError(
      'mTLS needs both the client certificate and its key (TEMPORAL_TLS_CLIENT_CERT_* and _KEY_*)',
    );
  }
  const ca = dataOf(t.serverCACert, 'TLS server CA certificate');
  return {
    ...(t.serverName ? { serverNameOverride: t.serverName } : {}),
    ...(ca ? { serverRootCACertificate: ca } : {}),
    ...(crt && key ? { clientCertPair: { crt, key } } : {}),
  };
}

function isLoopbackAddress(address: string): boolean {
  const host = address.startsWith('[') ? address.slice(1, address.indexOf(']')) : address.split(':')[0];
  return host === '127.0.0.1' || host === 'localhost' || host === '::1';
}

/**
 * The envconfig profile (file, then `TEMPORAL_*` variables) merged with `overrides`. Throws ConnectionConfigError
 * on a configuration that would silently drop its security.
 */
export function resolveConnectionConfig(
  overrides: ConnectionOverrides = {},
  env: Env = process.env,
): ResolvedConnectionConfig {
  if (overrides.local) {
    if (!overrides.address) throw new ConnectionConfigError('a local connection needs its address');
    return { address: overrides.address, namespace: overrides.namespace ?? DEFAULT_NAMESPACE };
  }
  const configFile = env.TEMPORAL_CONFIG_FILE?.trim();
  if (configFile && !fs.existsSync(configFile)) {
    // envconfig treats a missing file as "no profiles"; a named file that is not there is a mistake.
    throw new ConnectionConfigError(`TEMPORAL_CONFIG_FILE names ${configFile}, which does not exist`);
  }
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: definedEnv(env) });
  } catch (err) {
    throw new ConnectionConfigError(`Temporal connection profile: ${(err as Error).message}`);
  }
  const address = overrides.address ?? profile.address ?? DEFAULT_ADDRESS;
  const namespace = overrides.namespace ?? profile.namespace ?? DEFAULT_NAMESPACE;
  const apiKey = profile.apiKey?.trim() || undefined;
  const tls = tlsOf({ ...profile, ...(apiKey ? { apiKey } : { apiKey: undefined }) });
  if (apiKey && !tls && !isLoopbackAddress(address)) {
    throw new ConnectionConfigError(`an API key would be sent in plaintext to ${address}: enable TLS (TEMPORAL_TLS=1)`);
  }
  const credential = credentialOf(overrides, env, { address, apiKey, tls });
  return {
    address,
    namespace,
    ...(apiKey ? { apiKey } : {}),
    ...(tls !== undefined ? { tls } : {}),
    ...(profile.grpcMeta && Object.keys(profile.grpcMeta).length > 0 ? { metadata: profile.grpcMeta } : {}),
    ...(credential ? { credential } : {}),
    profile: env.TEMPORAL_PROFILE?.trim() || 'default',
  };
}

function credentialOf(
  overrides: ConnectionOverrides,
  env: Env,
  c: { readonly address: string; readonly apiKey: string | undefined; readonly tls: boolean | ResolvedTls | undefined },
): FrontendCredential | undefined {
  const tokenFile = configValue('LEDGERLOOP_TEMPORAL_TOKEN_FILE', env)?.trim();
  const safe = Boolean(c.tls) || isLoopbackAddress(c.address);
  if (tokenFile) {
    if (c.apiKey)
      throw new ConnectionConfigError(
        'both a Temporal API key and LEDGERLOOP_TEMPORAL_TOKEN_FILE are configured: keep the one your frontend takes',
      );
    if (!safe)
      throw new ConnectionConfigError(
        `LEDGERLOOP_TEMPORAL_TOKEN_FILE would send a token in plaintext to ${c.address}: enable TLS (TEMPORAL_TLS=1)`,
      );
  }
  if (overrides.bearerToken && !c.apiKey && safe) return { kind: 'actor', token: overrides.bearerToken };
  return tokenFile ? { kind: 'token-file', path: tokenFile } : undefined;
}

/** One line for logs: address, namespace, TLS mode; never the key or certificate material. */
export function describeConnection(c: ResolvedConnectionConfig): string {
  const tls = !c.tls ? 'plaintext' : c.tls === true || !c.tls.clientCertPair ? 'tls' : 'mtls';
  const token =
    c.credential?.kind === 'token-file' ? ' token-file' : c.credential?.kind === 'actor' ? ' actor-token' : '';
  return `${c.address} namespace=${c.namespace} ${tls}${c.apiKey ? ' api-key' : ''}${token}`;
}

/** The token file of `c`, read now: a file that holds no token refuses the connection (fail closed). */
function tokenSource(c: ResolvedConnectionConfig): TokenFileSource | undefined {
  if (c.credential?.kind !== 'token-file') return undefined;
  try {
    return tokenFileSource(c.credential.path);
  } catch (err) {
    throw new ConnectionConfigError((err as Error).message);
  }
}

function options<K extends string | (() => string)>(
  c: ResolvedConnectionConfig,
  apiKey: K | undefined,
  connectTimeout?: Duration,
) {
  return {
    address: c.address,
    // A token is not a reason for TLS (the SDK would turn it on for an API key): the cluster is plaintext on loopback.
    ...(c.tls !== undefined ? { tls: c.tls } : c.credential ? { tls: false } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(c.metadata ? { metadata: c.metadata } : {}),
    ...(connectTimeout !== undefined ? { connectTimeout } : {}),
  };
}

function staticKey(c: ResolvedConnectionConfig): string | undefined {
  return c.apiKey ?? (c.credential?.kind === 'actor' ? c.credential.token : undefined);
}

/** A client Connection (Client, CLI, fault runner) from the environment and `overrides`. */
export async function connectClient(
  overrides: ConnectionOverrides = {},
  env: Env = process.env,
): Promise<{ connection: Connection; config: ResolvedConnectionConfig }> {
  const config = resolveConnectionConfig(overrides, env);
  const source = tokenSource(config);
  // Asked on every call: a rewritten token file is used from the next call on.
  const apiKey = source ? () => source.current() : staticKey(config);
  return { connection: await Connection.connect(options(config, apiKey, overrides.connectTimeout)), config };
}

/** A NativeConnection (workers) from the environment and `overrides`. */
export async function connectNative(
  overrides: ConnectionOverrides = {},
  env: Env = process.env,
): Promise<{ connection: NativeConnection; config: ResolvedConnectionConfig }> {
  const config = resolveConnectionConfig(overrides, env);
  const source = tokenSource(config);
  const { connectTimeout: _ignored, ...opts } = options(config, source ? source.current() : staticKey(config));
  // Required here, not imported: the worker package costs every client command (the CLI) about 0.5 s to load.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { NativeConnection: Native } = require('@temporalio/worker') as typeof import('@temporalio/worker');
  const connection = await Native.connect(opts);
  // A worker runs for days; its token for hours: each new token in the file goes to the connection.
  if (source) watchTokenFile(source, (token) => connection.setApiKey(token));
  return { connection, config };
}

/**
 * Overrides for a server handle: a dev server this process started is `local` (no credentials); a server named by
 * TEMPORAL_ADDRESS (`external`) takes the profile's TLS and API key.
 */
export function serverTarget(server: {
  readonly address: string;
  readonly namespace?: string;
  readonly external?: boolean;
}): ConnectionOverrides {
  return {
    address: server.address,
    ...(server.namespace ? { namespace: server.namespace } : {}),
    ...(server.external ? {} : { local: true }),
  };
}
