/**
 * The connection flags every server-facing run command takes, and the session they open: a Temporal client that
 * uses the project's data converter (so it reads encrypted payloads) and tracing, with typed errors for an
 * unreachable server and for queries or updates no worker answers.
 */
import { Client, type Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { cliDataConverter } from '../src/codec/demo-key';
import { workflowPollers } from '../host/client/pollers';
import { tracingEnabled } from '../src/observability/tracing-mode';
import { connectClient, ConnectionConfigError, resolveConnectionConfig } from '../host/server/connection-config';
import {
  CliUsageError,
  isDeadlineExceeded,
  isRpcFailure,
  isNoPollerError,
  noWorkerHint,
  NoWorkerError,
  ServerUnreachableError,
  toCliError,
} from './errors';
import { parseDuration } from './parse';
import { addConfigOption } from './project';

export interface ConnectionFlags {
  readonly address: string;
  readonly namespace: string;
  /**
   * The token of whoever the command acts as (`--token`): also the command's credential at a frontend that
   * authorizes (host/server/connection-config.ts).
   */
  readonly actorToken?: string;
}

/** The envconfig profile's value (TEMPORAL_* variables over the profile file), or undefined if it is invalid. */
function fromProfile(env: NodeJS.ProcessEnv, key: 'address' | 'namespace'): string | undefined {
  try {
    return resolveConnectionConfig({}, env)[key];
  } catch {
    return undefined; // reported by openSession, where the connection is made
  }
}

/** TEMPORAL_ADDRESS, else the envconfig profile's address, else the dev server's default. */
export function defaultAddress(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEMPORAL_ADDRESS?.trim() || fromProfile(env, 'address') || '127.0.0.1:7233';
}

/** TEMPORAL_NAMESPACE, else the envconfig profile's namespace, else `default`. */
export function defaultNamespace(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEMPORAL_NAMESPACE?.trim() || fromProfile(env, 'namespace') || 'default';
}

/**
 * Adds `--address` and `--namespace` (defaults from the environment, which the project config fills: shown in
 * --help), and `--config` (the project config; cli/project.ts).
 */
export function addConnectionOptions(cmd: Command): Command {
  cmd
    .option('--address <host:port>', 'Temporal frontend (env TEMPORAL_ADDRESS)', defaultAddress())
    .option('--namespace <ns>', 'Temporal namespace (env TEMPORAL_NAMESPACE)', defaultNamespace());
  return addConfigOption(cmd);
}

/** Adds `--timeout <duration>` (parsed to ms, default 15 s): how long to wait for a worker to answer. */
export function addTimeoutOption(cmd: Command, what = 'a query'): Command {
  const parse = (v: string): number => {
    try {
      return parseDuration(v, '--timeout');
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message);
    }
  };
  return cmd.addOption(
    new Option('--timeout <duration>', `how long to wait for a worker to answer ${what}`)
      .argParser(parse)
      .default(15_000, '15s'),
  );
}

/** An open client and what is needed to word errors about it. */
export interface CliSession {
  readonly client: Client;
  readonly connection: Connection;
  readonly address: string;
  readonly namespace: string;
  /** The payload codecs the client uses (undefined: plain payloads); decode histories with the same. */
  readonly dataConverter: DataConverter | undefined;
  /**
   * Runs `fn` (a query or an update that a worker must answer) under a deadline; a deadline hit becomes a
   * NoWorkerError naming `what`.
   */
  answered<T>(what: string, workflowId: string, ms: number, fn: () => Promise<T>, taskQueue?: string): Promise<T>;
  /** Warns on `stream` once, `afterMs` from now, when no worker polls `taskQueue`; `stop()` cancels it. */
  watchForWorker(taskQueue: string, stream: { write(text: string): unknown }, afterMs?: number): { stop(): void };
}

/** How long a command waits for a worker before it checks for pollers and warns. */
export const NO_WORKER_WARNING_MS = 3_000;

/**
 * After `afterMs`, asks the server for the queue's pollers and warns when there are none (naming the queue and
 * how to start a worker). A failed check stays silent: it is advice, never an error.
 */
export function watchPollers(
  client: Client,
  namespace: string,
  taskQueue: string,
  stream: { write(text: string): unknown },
  afterMs: number,
): { stop(): void } {
  let stopped = false;
  const timer = setTimeout(() => {
    void workflowPollers(client, namespace, taskQueue).then(
      (pollers) => {
        if (!stopped && pollers.length === 0) {
          stream.write(
            `\nwarning: no worker is polling task queue ${taskQueue} (namespace ${namespace}); the run waits until one does. ${noWorkerHint()}\n`,
          );
        }
      },
      () => undefined,
    );
  }, afterMs);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

function validateAddress(address: string): string {
  const a = address.trim();
  if (!/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/.test(a))
    throw new CliUsageError(`--address: expected host:port, got "${address}"`);
  return a;
}

/** Connects (5 s) or throws ServerUnreachableError naming the address. */
export async function openSession(flags: ConnectionFlags): Promise<CliSession> {
  const address = validateAddress(flags.address);
  const namespace = flags.namespace.trim();
  if (namespace === '') throw new CliUsageError('--namespace: must not be empty');
  let dataConverter: DataConverter | undefined;
  try {
    dataConverter = cliDataConverter((line) => process.stderr.write(`${line}\n`));
  } catch (err) {
    throw new CliUsageError((err as Error).message);
  }
  // OpenTelemetry loads only when tracing is on: with it off (the default) a command does not pay for it.
  const tracing = tracingEnabled()
    ? // eslint-disable-next-line @typescript-eslint/no-require-imports -- deferred: loads OpenTelemetry
      (require('../src/observability/tracing') as typeof import('../src/observability/tracing')).tracingFromEnv(
        'ledgerloop-cli',
      )
    : undefined;
  let connection: Connection;
  try {
    // TLS, mTLS and API keys from the envconfig profile / TEMPORAL_* variables (host/server/connection-config.ts).
    ({ connection } = await connectClient({
      address,
      namespace,
      connectTimeout: '5s',
      ...(flags.actorToken ? { bearerToken: flags.actorToken } : {}),
    }));
  } catch (err) {
    if (err instanceof ConnectionConfigError) throw new CliUsageError(err.message);
    throw new ServerUnreachableError(address, (err as Error).message);
  }
  const client = new Client({
    connection,
    namespace,
    ...(dataConverter ? { dataConverter } : {}),
    ...(tracing ? { plugins: [tracing.plugin] } : {}),
  });
  return {
    client,
    connection,
    address,
    namespace,
    dataConverter,
    async answered(what, workflowId, ms, fn, taskQueue) {
      const deadline = Date.now() + ms;
      // An update waits for a worker without an error: say so early when none polls the run's queue.
      const watch = taskQueue
        ? watchPollers(client, namespace, taskQueue, process.stderr, NO_WORKER_WARNING_MS)
        : undefined;
      try {
        return await connection.withDeadline(deadline, fn);
      } catch (err) {
        // Our deadline, reported as DEADLINE_EXCEEDED by the client, or as whatever status the server chose when
        // it gave up at the same moment: either way nobody answered in time.
        const timedOut = isDeadlineExceeded(err) || (isRpcFailure(err) && Date.now() >= deadline - 250);
        if (timedOut) throw new NoWorkerError(what, workflowId, ms, taskQueue);
        if (isNoPollerError(err)) throw new NoWorkerError(what, workflowId, undefined, taskQueue);
        throw err;
      } finally {
        watch?.stop();
      }
    },
    watchForWorker(taskQueue, stream, afterMs = NO_WORKER_WARNING_MS) {
      return watchPollers(client, namespace, taskQueue, stream, afterMs);
    },
  };
}

/**
 * Opens a session, runs `body`, closes the connection. Errors from the client are mapped to CliErrors
 * (toCliError) with the address, namespace and workflow id for their messages.
 */
export async function withSession<T>(
  flags: ConnectionFlags,
  workflowId: string | undefined,
  body: (s: CliSession) => Promise<T>,
): Promise<T> {
  const session = await openSession(flags);
  try {
    return await body(session);
  } catch (err) {
    throw toCliError(err, {
      address: session.address,
      namespace: session.namespace,
      ...(workflowId ? { workflowId } : {}),
    });
  } finally {
    await session.connection.close().catch(() => undefined);
  }
}
