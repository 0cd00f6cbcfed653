/**
 * The demo's payload encryption when no keys are configured: a demo key generated once and kept in
 * `<repo>/.data/codec-demo-keys` (git-ignored, mode 0600), so workflows the demo left in its dev server database
 * stay readable in the Web UI on the next `npm start`. Never use it for anything but the local demo.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { dataDir } from '../package-paths';
import {
  CODEC_KEY_ID_ENV,
  CODEC_KEYS_ENV,
  CODEC_KEYS_FILE_ENV,
  codecFromEnv,
  dataConverterFromEnv,
  generateCodecKeys,
  parseCodecKeys,
} from './data-converter';

/** Where the codec keys of a process came from. */
export type CodecKeySource =
  | { readonly kind: 'env'; readonly keyId: string }
  | { readonly kind: 'demo'; readonly keyId: string; readonly file: string };

/**
 * Leaves configured keys (LEDGERLOOP_CODEC_KEYS or LEDGERLOOP_CODEC_KEYS_FILE) alone; otherwise loads (or creates)
 * the demo key file and exports it as LEDGERLOOP_CODEC_KEYS / LEDGERLOOP_CODEC_KEY_ID into `env`, so worker
 * processes started from here inherit it.
 */
export function ensureCodecKeys(file: string, env: NodeJS.ProcessEnv = process.env): CodecKeySource {
  const configured = codecFromEnv(env);
  if (configured) return { kind: 'env', keyId: configured.activeKeyId };
  let spec: string | undefined;
  try {
    spec = fs.readFileSync(file, 'utf8').trim();
    parseCodecKeys(spec);
  } catch {
    spec = undefined;
  }
  if (!spec) {
    spec = generateCodecKeys('demo').keys;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, `${spec}\n`, { mode: 0o600 });
  }
  const ring = parseCodecKeys(spec);
  env[CODEC_KEYS_ENV] = spec;
  env[CODEC_KEY_ID_ENV] = ring.activeKeyId;
  return { kind: 'demo', keyId: ring.activeKeyId, file };
}

/** Where `npm start` and `npm run cluster` keep the demo key (created on their first run). */
export const DEMO_KEY_FILE = path.join(dataDir(), 'codec-demo-keys');

/** The codec keys a command-line process on this machine uses, in order. */
export type LocalCodecKeys =
  { readonly kind: 'configured' } | { readonly kind: 'demo'; readonly file: string } | { readonly kind: 'none' };

/**
 * Which keys a CLI process uses, so that what it writes is encrypted as the stack beside it encrypts: the configured
 * keys (LEDGERLOOP_CODEC_KEYS or _FILE; a project config names its `codec-keys` file there, src/project/environment.ts),
 * else the demo key `npm start` or `npm run cluster` made here (their workers use it), else none.
 */
export function localCodecKeys(env: NodeJS.ProcessEnv = process.env, demoFile = DEMO_KEY_FILE): LocalCodecKeys {
  if (env[CODEC_KEYS_ENV]?.trim() || env[CODEC_KEYS_FILE_ENV]?.trim()) return { kind: 'configured' };
  return fs.existsSync(demoFile) ? { kind: 'demo', file: demoFile } : { kind: 'none' };
}

/**
 * For a process that starts workers or clients of its own (`ledgerloop worker` without a project): when no keys
 * are configured and the demo key exists, names it in `env` (LEDGERLOOP_CODEC_KEYS_FILE) so the worker reads and
 * writes what the CLI and the demo's workers do. Resolves which keys are in force.
 */
export function adoptLocalCodecKeys(env: NodeJS.ProcessEnv = process.env, demoFile = DEMO_KEY_FILE): LocalCodecKeys {
  const local = localCodecKeys(env, demoFile);
  if (local.kind === 'demo') env[CODEC_KEYS_FILE_ENV] = local.file;
  return local;
}

/**
 * The data converter of a command-line client: the configured keys, else the demo key of this place (both encode
 * and decode: a token the CLI sends to the demo's stack is encrypted like everything its workers write; `note`
 * says so once), else none (plain payloads: a command that would send a token refuses, cli/commands/call-command.ts).
 */
export function cliDataConverter(
  note: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
  demoFile = DEMO_KEY_FILE,
): DataConverter | undefined {
  const local = localCodecKeys(env, demoFile);
  // No keys: none (or, under LEDGERLOOP_CODEC_STRICT, the refusal dataConverterFromEnv throws).
  if (local.kind !== 'demo') return dataConverterFromEnv(env);
  const demo = codecFromEnv({ ...env, [CODEC_KEYS_FILE_ENV]: local.file });
  if (!demo) return undefined;
  const said = `note: no ${CODEC_KEYS_ENV}: payloads are encrypted and read with the demo key in ${path.relative(process.cwd(), local.file) || local.file}, as the demo's workers do (${CODEC_KEYS_FILE_ENV} names another)`;
  return { payloadCodecs: [new NotingCodec(demo, () => note(said))] };
}

/** `inner`, and `onUse` once, on the first payload it encodes or decodes. */
class NotingCodec implements PayloadCodec {
  private told = false;
  constructor(
    private readonly inner: PayloadCodec,
    private readonly onUse: () => void,
  ) {}
  private tell(payloads: readonly Payload[]): void {
    if (this.told || payloads.length === 0) return;
    this.told = true;
    this.onUse();
  }
  encode(payloads: Payload[]): Promise<Payload[]> {
    this.tell(payloads);
    return this.inner.encode(payloads);
  }
  decode(payloads: Payload[]): Promise<Payload[]> {
    this.tell(payloads);
    return this.inner.decode(payloads);
  }
}
