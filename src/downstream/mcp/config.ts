/**
 * How a worker reaches each MCP server, by the server's name in the project (the tool set's `server`). Worker
 * side only: nothing here is bundled into workflow code or recorded in history.
 *
 *   servers: {
 *     files: { command: 'mcp-server-filesystem', args: ['/srv/data'] },                 // stdio: the worker runs it
 *     everything: { url: 'http://127.0.0.1:3001/mcp', auth: { secret: 'EVERYTHING_TOKEN' } },  // Streamable HTTP
 *   }
 *
 * Credentials are worker secrets: the config names an environment variable (`auth.secret`, `secretEnv`), the
 * worker reads its value at start, sends it only to the server, and writes `[secret]` wherever an error or a log
 * line would have carried it. A URL with credentials in it is refused.
 */

/** A server the worker starts as a child process and speaks to over its stdin and stdout. */
export interface McpStdioServer {
  /** The executable, e.g. `mcp-server-filesystem` (from the project's node_modules/.bin, or an absolute path). */
  readonly command: string;
  readonly args?: readonly string[];
  /** More environment of the server process: plain values (the SDK passes a safe default environment too). */
  readonly env?: Readonly<Record<string, string>>;
  /** Worker secrets passed into the server's environment: `{ API_TOKEN: 'FILES_API_TOKEN' }`. */
  readonly secretEnv?: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/** A server the worker reaches over Streamable HTTP. */
export interface McpHttpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`; no credentials in it. */
  readonly url: string;
  /**
   * A worker secret sent on every request: `header` (default `authorization`) is `<scheme> <value>`, scheme
   * default `Bearer` (`''` sends the value alone).
   */
  readonly auth?: { readonly secret: string; readonly header?: string; readonly scheme?: 'Bearer' | '' };
}

export type McpServerConfig = McpStdioServer | McpHttpServer;

/** The timings of one server's connection. */
export interface McpConnectionOptions {
  /**
   * How long a call waits for the server's answer; past it the call is UNKNOWN, never FAILED. Default 10 s (as
   * Ledgerloop's HTTP client): keep it below the tool attempt timeout, so the activity reports the lost answer.
   */
  readonly callTimeoutMs?: number;
  /** How long connecting (spawn or first request, and `initialize`) may take. Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** The first wait before a restart after a crash, doubled each time up to `maxRestartDelayMs`. Default 200 ms. */
  readonly restartDelayMs?: number;
  /** The longest wait between restarts. Default 5 s: a server that keeps crashing is retried, not hammered. */
  readonly maxRestartDelayMs?: number;
  /**
   * The largest message read from a stdio server (the SDK's read buffer). A larger answer closes the connection and
   * its call is UNKNOWN. Default 4 MiB.
   */
  readonly maxMessageBytes?: number;
}

export const DEFAULT_CALL_TIMEOUT_MS = 10_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** A server config the worker cannot start with: nothing was started or connected. */
export class McpConfigError extends Error {
  override readonly name = 'Config.Invalid';
}

export function isHttpServer(config: McpServerConfig): config is McpHttpServer {
  return typeof (config as McpHttpServer).url === 'string';
}

/** The secrets a server needs, by the variable that holds each: `auth.secret` and the values of `secretEnv`. */
export function secretNames(config: McpServerConfig): string[] {
  if (isHttpServer(config)) return config.auth ? [config.auth.secret] : [];
  return Object.values(config.secretEnv ?? {});
}

/**
 * Checks `config` for server `name` and reads its secrets from `env`. Throws `McpConfigError` for a config that
 * cannot work: neither command nor URL, a URL that is not http(s) or carries credentials, a missing secret.
 */
export function checkServerConfig(
  name: string,
  config: McpServerConfig,
  env: Readonly<Record<string, string | undefined>>,
): Readonly<Record<string, string>> {
  const at = `MCP server ${name}`;
  if (config === null || typeof config !== 'object') throw new McpConfigError(`${at}: a command or a url is required`);
  if (isHttpServer(config)) {
    let url: URL;
    try {
      url = new URL(config.url);
    } catch {
      throw new McpConfigError(`${at}: url is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new McpConfigError(`${at}: url must be http or https (got ${url.protocol})`);
    if (url.username !== '' || url.password !== '')
      throw new McpConfigError(`${at}: credentials do not belong in the url; name a worker secret in auth.secret`);
  } else if (typeof (config as McpStdioServer).command !== 'string' || (config as McpStdioServer).command === '') {
    throw new McpConfigError(`${at}: a command or a url is required`);
  }
  const secrets: Record<string, string> = {};
  for (const secret of secretNames(config)) {
    const value = env[secret];
    if (value === undefined || value === '')
      throw new McpConfigError(`${at}: the worker secret ${secret} is not set in the worker's environment`);
    secrets[secret] = value;
  }
  return secrets;
}

/** `text` with every secret value written as `[secret]`: for errors, reasons and log lines about a server. */
export function redact(text: string, secrets: Readonly<Record<string, string>>): string {
  let out = text;
  for (const value of Object.values(secrets)) if (value.length >= 4) out = out.split(value).join('[secret]');
  return out;
}

/** A description of where the server is, safe for logs: the command and its arguments, or the URL's origin and path. */
export function describeServer(config: McpServerConfig): string {
  if (isHttpServer(config)) {
    const url = new URL(config.url);
    return `${url.origin}${url.pathname}`;
  }
  return [config.command, ...(config.args ?? [])].join(' ').slice(0, 200);
}
