/**
 * Whether this process traces, without loading OpenTelemetry: about 300 modules and most of a second that a
 * `ledgerloop` command with tracing off (the default) should not pay. `tracing.ts` creates the tracing when
 * LEDGERLOOP_TRACING asks for it and registers it here, so a command can shut it down without loading it.
 */
import { configValue } from '../config';

/** Where spans go. */
export type TracingMode = 'off' | 'console' | 'otlp';

type Env = Readonly<Record<string, string | undefined>>;

/** The tracing mode LEDGERLOOP_TRACING asks for; throws on an unknown value. */
export function tracingModeFromEnv(env: Env = process.env): TracingMode {
  return configValue('LEDGERLOOP_TRACING', env) ?? 'off';
}

/** True when LEDGERLOOP_TRACING asks for tracing, i.e. the workflow bundle should carry the interceptors. */
export function tracingEnabled(env: Env = process.env): boolean {
  return tracingModeFromEnv(env) !== 'off';
}

let processTracing: { shutdown(): Promise<void> } | undefined;

/** Called by `tracingFromEnv` with the tracing it created for this process. */
export function registerProcessTracing(tracing: { shutdown(): Promise<void> }): void {
  processTracing = tracing;
}

/** Flushes and shuts down the tracing tracingFromEnv created, if any. Safe to call more than once. */
export async function shutdownTracingFromEnv(): Promise<void> {
  const t = processTracing;
  if (!t) return;
  await t.shutdown().catch((err: unknown) => process.stderr.write(`tracing: shutdown failed: ${String(err)}\n`));
}
