/**
 * The local model server as a process (what `ledgerloop model serve` runs):
 *
 *   node -r tsx/cjs packages/local-model/src/main.ts [--model ID] [--port 8321] [--threads N] [--context-size 4096]
 *
 * It serves one model of weights.json (`--model`, else LEDGERLOOP_LOCAL_MODEL_ID, else the catalogue's default),
 * from the weights scripts/setup-local-model.sh installed, after checking their SHA-256 against
 * weights.json (a missing or different file refuses to start: nothing is downloaded here). It binds to a loopback
 * address only (it has no authentication), prints one JSON line on stdout when it listens
 * (`{"event":"listening","url":…}`), logs to stderr, and stops on SIGINT/SIGTERM.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Engine } from './engine';
import { startServer, type RunningServer } from './server';
import {
  chooseModel,
  isLoopback,
  parseServerFlags,
  SetupError,
  threadCount,
  type ModelCatalogue,
  type ModelPin,
} from './settings';

export { SetupError };

export const PACKAGE_DIR = path.resolve(__dirname, '..');
export const MODELS_DIR = path.join(PACKAGE_DIR, 'models');
export const DEFAULT_PORT = 8321;

export function modelCatalogue(): ModelCatalogue {
  return JSON.parse(readFileSync(path.join(PACKAGE_DIR, 'weights.json'), 'utf8')) as ModelCatalogue;
}

/** The pin of the model to serve (see `chooseModel`). */
export function weightsPin(model?: string): ModelPin {
  return chooseModel(modelCatalogue(), model);
}

const setupHint = (pin: ModelPin): string =>
  `run \`bash scripts/setup-local-model.sh ${pin.id}\` (it installs node-llama-cpp and the pinned weights)`;

/** The weights file, checked against its pinned size and SHA-256; throws `SetupError` when it is not the one. */
export async function verifiedWeights(dir = MODELS_DIR, pin = weightsPin()): Promise<string> {
  const SETUP_HINT = setupHint(pin);
  const file = path.join(dir, pin.file);
  if (!existsSync(file)) throw new SetupError(`the model weights ${file} are missing: ${SETUP_HINT}`);
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  const digest = hash.digest('hex');
  if (bytes !== pin.bytes || digest !== pin.sha256) {
    throw new SetupError(
      `the model weights ${file} are not the pinned ones (sha256 ${digest}, ${bytes} bytes; expected ${pin.sha256}, ${pin.bytes} bytes): ${SETUP_HINT}`,
    );
  }
  return file;
}

export interface ServeOptions {
  /** A model id of weights.json (default: LEDGERLOOP_LOCAL_MODEL_ID, else the catalogue's default). */
  readonly model?: string;
  readonly host?: string;
  readonly port?: number;
  readonly threads?: number;
  readonly contextSize?: number;
  readonly sequences?: number;
  readonly maxQueue?: number;
  readonly temperature?: number;
  readonly seed?: number;
  readonly maxTokens?: number;
  readonly log?: (line: string) => void;
}

export interface LocalModelServer extends RunningServer {
  readonly modelId: string;
  readonly threads: number;
  readonly loadMs: number;
  stop(): Promise<void>;
}

/** Loads the model (one per process) and serves it. */
export async function serveLocalModel(o: ServeOptions = {}): Promise<LocalModelServer> {
  const log = o.log ?? ((line: string) => process.stderr.write(`local-model: ${line}\n`));
  const host = o.host ?? '127.0.0.1';
  if (!isLoopback(host))
    throw new SetupError(`--host ${host} is not a loopback address: the server has no authentication`);
  const pin = weightsPin(o.model);
  const modelPath = await verifiedWeights(MODELS_DIR, pin);
  const threads = threadCount(o.threads);
  let engine: Engine;
  try {
    engine = await Engine.load({
      modelPath,
      threads,
      contextSize: o.contextSize ?? 4096,
      sequences: o.sequences ?? 1,
      maxQueue: o.maxQueue ?? 16,
      log,
    });
  } catch (err) {
    if (
      (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' ||
      /Cannot find (module|package)/.test(String(err))
    )
      throw new SetupError(`node-llama-cpp is not installed: ${setupHint(pin)}`);
    throw err;
  }
  const server = await startServer({
    engine,
    modelId: pin.id,
    host,
    port: o.port ?? DEFAULT_PORT,
    defaultTemperature: o.temperature ?? 0,
    defaultSeed: o.seed ?? 0,
    defaultMaxTokens: o.maxTokens ?? 512,
    maxParallelCalls: 4,
    fingerprint: `ledgerloop-local-${pin.sha256.slice(0, 12)}`,
    log,
  }).catch(async (err: unknown) => {
    await engine.dispose();
    throw err;
  });
  let stopped: Promise<void> | undefined;
  return {
    ...server,
    modelId: pin.id,
    threads,
    loadMs: engine.loadMs,
    stop: () => (stopped ??= server.close().then(() => engine.dispose())),
  };
}

/** Runs the server until SIGINT/SIGTERM; the JSON line on stdout says where it listens. */
export async function runServerProcess(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const server = await serveLocalModel(parseServerFlags(argv));
  process.stdout.write(
    `${JSON.stringify({ event: 'listening', url: server.url, model: server.modelId, threads: server.threads, loadMs: server.loadMs, pid: process.pid })}\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.stop();
}

if (require.main === module) {
  runServerProcess().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`local-model: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(err instanceof SetupError ? 2 : 1);
    },
  );
}
