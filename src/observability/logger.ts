/**
 * The one logger every Ledgerloop process gives the SDK (`Runtime.install({ logger })`): the SDK's DefaultLogger
 * with a structured sink. The SDK adds the run's identity to what workflow and activity code logs (workflowId,
 * runId, workflowType, taskQueue; activityId, attempt); Ledgerloop's own lines add `callId` and `operationKey`, so
 * one run's story can be read from the logs of any worker that served it.
 *
 * - `json` (the default): one JSON object per line on stderr: `{"ts","level","component","msg",...meta}`.
 * - `text`: `[component] LEVEL msg key=value …`, for a terminal.
 * - Level and format come from LEDGERLOOP_LOG_LEVEL (default `warn`) and LEDGERLOOP_LOG_FORMAT unless given.
 * - Fields whose name says they hold a secret (token, password, secret, authorization, apiKey, privateKey) are
 *   written as `"[redacted]"`; an error is written as its name, message and code, never its stack's payloads.
 */
import { DefaultLogger, Runtime, type LogEntry, type LogLevel, type Logger } from '@temporalio/worker';
import { configValue } from '../config';
import { isUnactionableCoreLine } from './core-log-filter';

export interface RuntimeLoggerOptions {
  /** Which process logs: `worker`, `bench`, `replay`, `test`, … */
  readonly component: string;
  /** Lowest level written; `OFF` writes nothing. Default LEDGERLOOP_LOG_LEVEL, else `WARN`. */
  readonly level?: LogLevel | 'OFF';
  readonly format?: 'json' | 'text';
  /** Where a finished line goes, with its entry; default stderr (stdout stays free for a process's own output). */
  readonly write?: (line: string, entry: LogEntry) => void;
}

const SECRET_FIELD =
  /(^|_)(token|password|secret|authorization|api_?key|private_?key)$|(Token|Password|Secret|ApiKey|PrivateKey)$/i;

function plain(value: unknown, depth = 0): unknown {
  if (value instanceof Error) {
    const code = (value as { code?: unknown }).code;
    return { name: value.name, message: value.message, ...(typeof code === 'string' ? { code } : {}) };
  }
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((v) => plain(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fieldValue(k, v, depth + 1)]));
}

function fieldValue(name: string, value: unknown, depth = 0): unknown {
  return SECRET_FIELD.test(name) && value !== undefined ? '[redacted]' : plain(value, depth);
}

/** One log entry as the JSON object a line holds. */
export function logRecord(component: string, entry: LogEntry): Record<string, unknown> {
  const meta = Object.fromEntries(Object.entries(entry.meta ?? {}).map(([k, v]) => [k, fieldValue(k, v)]));
  return {
    ts: new Date(Number(entry.timestampNanos / 1_000_000n)).toISOString(),
    level: entry.level,
    component,
    msg: entry.message,
    ...meta,
  };
}

function textLine(component: string, entry: LogEntry): string {
  const meta = Object.entries(entry.meta ?? {})
    .filter(([k]) => k !== 'sdkComponent')
    .map(([k, v]) => `${k}=${JSON.stringify(fieldValue(k, v))}`)
    .join(' ');
  return `[${component}] ${entry.level} ${entry.message}${meta ? ` ${meta}` : ''}`;
}

const SILENT: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** The SDK logger for this process; it drops the SDK core's unactionable lines (./core-log-filter.ts). */
export function runtimeLogger(opts: RuntimeLoggerOptions): Logger {
  const level = opts.level ?? configValue('LEDGERLOOP_LOG_LEVEL') ?? 'WARN';
  if (level === 'OFF') return SILENT;
  const format = opts.format ?? configValue('LEDGERLOOP_LOG_FORMAT') ?? 'json';
  const write = opts.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  return new DefaultLogger(level, (entry) => {
    if (isUnactionableCoreLine(entry)) return;
    write(
      format === 'json' ? JSON.stringify(logRecord(opts.component, entry)) : textLine(opts.component, entry),
      entry,
    );
  });
}

let installed = false;
/**
 * Installs the SDK runtime with `runtimeLogger(opts)`, once per process: a later call, or a runtime another part of
 * the process installed first, leaves the first one in place. The SDK core's own lines are forwarded to that logger
 * (the SDK default prints them to stdout past the logger's level, format and filter): `coreLevel`, default `WARN`
 * (the SDK's own default), is the lowest core level forwarded.
 */
export function installRuntimeLogger(opts: RuntimeLoggerOptions & { readonly coreLevel?: LogLevel }): void {
  if (installed) return;
  installed = true;
  try {
    const filter = opts.coreLevel ? { core: opts.coreLevel, other: opts.coreLevel } : { core: 'WARN' as const };
    Runtime.install({ logger: runtimeLogger(opts), telemetryOptions: { logging: { filter, forward: {} } } });
  } catch {
    /* a runtime is installed already */
  }
}
