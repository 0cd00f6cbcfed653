/**
 * One MCP server's connection, owned by the worker for its whole life (never by workflow code):
 *
 * - stdio: the worker starts the server process, restarts it after it exits (a crash, a kill) with a capped
 *   backoff, and stops it on shutdown (stdin closed, then SIGTERM, then SIGKILL, by the SDK's transport);
 * - Streamable HTTP: the worker opens a session with the worker secret in a header, and opens a new one when the
 *   connection closes or the server drops the session.
 *
 * After each connect, and whenever the server says its list changed, the tool listing is read again: the tool set
 * a run sees is the checked-in one, and the listing is what the worker holds the server to (`drift.ts`).
 * Nothing here throws at a caller: a server that cannot be reached is a state, and calls see it as `not_sent`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ListToolsResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ListedTool } from '../../tools/mcp/digest';
import {
  DEFAULT_CALL_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  describeServer,
  isHttpServer,
  redact,
  type McpConnectionOptions,
  type McpServerConfig,
} from './config';
import { TrackingTransport } from './tracking-transport';

/** What the connection reports as it goes (the worker's logger): never a secret, never a payload. */
export interface McpConnectionLog {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export type ConnectionState = 'idle' | 'connecting' | 'ready' | 'down' | 'closed';

/** A connected session: the SDK's client and the traced transport under it. */
export interface Session {
  readonly client: Client;
  readonly transport: TrackingTransport;
  /** Which connect this is (1 for the first): a restart makes a new one. */
  readonly generation: number;
}

/** The largest listing read: pages and tools. */
const MAX_LIST_PAGES = 50;
const MAX_LISTED_TOOLS = 2_000;
/** Last lines of a stdio server's stderr kept for the log line of its exit. */
const STDERR_LINES = 20;

export const CLIENT_INFO = { name: 'ledgerloop', version: '0.1.0' } as const;

export class McpConnection {
  state: ConnectionState = 'idle';
  /** How many times the server was (re)connected after the first. */
  restarts = 0;
  private session: Session | undefined;
  private listing: ReadonlyMap<string, ListedTool> | undefined;
  private generation = 0;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private waiters: (() => void)[] = [];
  private listeners: ((listing: ReadonlyMap<string, ListedTool>) => void)[] = [];
  private stderrTail: string[] = [];
  private pidNow: number | null = null;
  private firstAttempt: Promise<void> | undefined;

  readonly callTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly restartDelayMs: number;
  private readonly maxRestartDelayMs: number;
  private readonly maxMessageBytes: number;

  constructor(
    readonly name: string,
    private readonly config: McpServerConfig,
    private readonly secrets: Readonly<Record<string, string>>,
    options: McpConnectionOptions = {},
    private readonly log: McpConnectionLog = { info: () => undefined, warn: () => undefined },
  ) {
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.restartDelayMs = options.restartDelayMs ?? 200;
    this.maxRestartDelayMs = options.maxRestartDelayMs ?? 5_000;
    this.maxMessageBytes = options.maxMessageBytes ?? 4 * 1024 * 1024;
  }

  /** Where the server is, for logs. */
  get where(): string {
    return describeServer(this.config);
  }

  /** The pid of the running stdio server, or null (HTTP, or not running). */
  get pid(): number | null {
    return this.state === 'ready' ? this.pidNow : null;
  }

  /** Starts connecting; resolves once the first attempt connected or failed (a failure keeps retrying). */
  start(): Promise<void> {
    if (this.firstAttempt === undefined) this.firstAttempt = this.connect();
    return this.firstAttempt;
  }

  /** The session once connected, waiting up to `timeoutMs` (or until `signal`); undefined when there is none. */
  async ready(timeoutMs: number, signal?: AbortSignal): Promise<Session | undefined> {
    if (this.state === 'ready' && this.session) return this.session;
    if (this.state === 'closed' || timeoutMs <= 0 || signal?.aborted) return undefined;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
      };
      const t = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done);
      this.waiters.push(done);
    });
    return this.state === 'ready' ? this.session : undefined;
  }

  /** The server's last listing (undefined before the first), by tool name. */
  tools(): ReadonlyMap<string, ListedTool> | undefined {
    return this.listing;
  }

  /** Called with each new listing (after a connect, or the server's `list_changed`). */
  onListing(listener: (listing: ReadonlyMap<string, ListedTool>) => void): void {
    this.listeners.push(listener);
  }

  /** The session of the call that saw it fail at the transport: reconnect (an HTTP session the server dropped). */
  sessionLost(session: Session, why: string): void {
    if (session.generation !== this.generation || this.state !== 'ready') return;
    this.log.warn('MCP session lost; reconnecting', { server: this.name, why: this.redact(why) });
    void this.drop(session).then(() => this.scheduleReconnect());
  }

  /** Stops the server (stdio) or ends the session (HTTP), and reconnects no more. */
  async close(): Promise<void> {
    this.state = 'closed';
    clearTimeout(this.timer);
    this.wake();
    const s = this.session;
    this.session = undefined;
    if (s) await this.end(s);
  }

  /** A function, so a check after an `await` is not narrowed by one before it. */
  private closed(): boolean {
    return this.state === 'closed';
  }

  private redact(text: string): string {
    return redact(text, this.secrets);
  }

  private wake(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }

  private transport(): Transport {
    if (isHttpServer(this.config)) {
      const { auth } = this.config;
      const headers: Record<string, string> = {};
      if (auth) {
        const value = this.secrets[auth.secret] ?? '';
        const scheme = auth.scheme ?? 'Bearer';
        headers[auth.header ?? 'authorization'] = scheme === '' ? value : `${scheme} ${value}`;
      }
      return new StreamableHTTPClientTransport(new URL(this.config.url), { requestInit: { headers } });
    }
    const c = this.config;
    const env: Record<string, string> = { ...(c.env ?? {}) };
    for (const [variable, secret] of Object.entries(c.secretEnv ?? {})) env[variable] = this.secrets[secret] ?? '';
    const stdio = new StdioClientTransport({
      command: c.command,
      args: [...(c.args ?? [])],
      env,
      ...(c.cwd !== undefined ? { cwd: c.cwd } : {}),
      stderr: 'pipe',
      maxBufferSize: this.maxMessageBytes,
    });
    stdio.stderr?.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        this.stderrTail.push(this.redact(line).slice(0, 300));
        if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
      }
    });
    return stdio;
  }

  private async connect(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'connecting';
    const generation = ++this.generation;
    const transport = new TrackingTransport(this.transport());
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const session: Session = { client, transport, generation };
    client.onclose = () => this.lost(session);
    client.onerror = () => undefined; // transport errors surface on the calls they fail, and on close
    try {
      await client.connect(transport, { timeout: this.connectTimeoutMs });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        void this.relist(session);
      });
      await this.relist(session, true);
    } catch (err) {
      this.failures += 1;
      this.log.warn('MCP server did not connect; retrying', {
        server: this.name,
        where: this.where,
        why: this.redact(err instanceof Error ? err.message : String(err)).slice(0, 300),
        stderr: this.stderrTail.slice(-5),
      });
      await this.end(session);
      if (generation === this.generation) this.scheduleReconnect();
      return;
    }
    if (this.closed() || generation !== this.generation) {
      await this.end(session);
      return;
    }
    this.session = session;
    this.pidNow = transport.inner instanceof StdioClientTransport ? transport.inner.pid : null;
    this.failures = 0;
    this.state = 'ready';
    this.log.info('MCP server connected', {
      server: this.name,
      where: this.where,
      generation,
      tools: this.listing?.size ?? 0,
    });
    this.wake();
  }

  /** Reads the listing again; a failure leaves the last one (logged), except on connect, where it fails the connect. */
  private async relist(session: Session, connecting = false): Promise<void> {
    try {
      const tools = new Map<string, ListedTool>();
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const answer = await session.client.request(
          { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
          ListToolsResultSchema,
          { timeout: this.connectTimeoutMs },
        );
        for (const tool of answer.tools) if (tools.size < MAX_LISTED_TOOLS) tools.set(tool.name, tool);
        cursor = answer.nextCursor;
        if (cursor === undefined) break;
      }
      if (session.generation !== this.generation) return;
      this.listing = tools;
      for (const listener of this.listeners) listener(tools);
    } catch (err) {
      if (connecting) throw err;
      this.log.warn('MCP tool listing could not be read; keeping the last one', {
        server: this.name,
        why: this.redact(err instanceof Error ? err.message : String(err)).slice(0, 300),
      });
    }
  }

  private lost(session: Session): void {
    if (session.generation !== this.generation || this.state === 'closed') return;
    const was = this.state;
    this.session = undefined;
    this.pidNow = null;
    if (was !== 'ready') return; // a failed connect schedules its own retry
    this.state = 'down';
    this.log.warn('MCP server connection closed; restarting', {
      server: this.name,
      where: this.where,
      generation: session.generation,
      stderr: this.stderrTail.slice(-5),
    });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.state === 'closed') return;
    this.state = 'down';
    clearTimeout(this.timer);
    const delay = Math.min(this.maxRestartDelayMs, this.restartDelayMs * 2 ** Math.min(this.failures, 16));
    this.timer = setTimeout(() => {
      this.restarts += 1;
      void this.connect();
    }, delay);
    this.timer.unref();
  }

  private async drop(session: Session): Promise<void> {
    if (this.session === session) this.session = undefined;
    this.state = 'down';
    await this.end(session);
  }

  /** Ends a session: an HTTP session is terminated at the server, a stdio server is stopped. Never throws. */
  private async end(session: Session): Promise<void> {
    const inner = session.transport.inner;
    if (inner instanceof StreamableHTTPClientTransport && inner.sessionId !== undefined)
      await inner.terminateSession().catch(() => undefined);
    await session.client.close().catch(() => undefined);
  }
}
