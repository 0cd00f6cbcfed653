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

/**
 * The data converter of a command-line client: the configured keys (LEDGERLOOP_CODEC_KEYS or _FILE), else, when
 * `npm start` or `npm run cluster` made a demo key in this repository, one that DECODES with it (`note` says so)
 * and encodes nothing: what the CLI sends stays plaintext, which the demo's workers accept and a worker without
 * keys can read, while the demo's encrypted results, queries and histories become readable. Else none.
 */
export function cliDataConverter(
  note: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
  demoFile = DEMO_KEY_FILE,
): DataConverter | undefined {
  const configured = dataConverterFromEnv(env);
  if (configured) return configured;
  if (!fs.existsSync(demoFile)) return undefined;
  const demo = codecFromEnv({ [CODEC_KEYS_FILE_ENV]: demoFile });
  if (!demo) return undefined;
  const said = `note: no ${CODEC_KEYS_ENV}: read encrypted payloads with the demo key in ${path.relative(process.cwd(), demoFile) || demoFile} (${CODEC_KEYS_FILE_ENV} names another)`;
  return { payloadCodecs: [new DecodeOnlyCodec(demo, () => note(said))] };
}

const ENCRYPTED = 'binary/encrypted';

/** Decodes with `inner`; encodes nothing (payloads leave as they are). `onDecrypt` runs once, on the first encrypted payload. */
export class DecodeOnlyCodec implements PayloadCodec {
  private told = false;
  constructor(
    private readonly inner: PayloadCodec,
    private readonly onDecrypt: () => void = () => undefined,
  ) {}
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads;
  }
  decode(payloads: Payload[]): Promise<Payload[]> {
    const encrypted = payloads.some(
      (p) => p.metadata?.['encoding'] !== undefined && Buffer.from(p.metadata['encoding']).toString() === ENCRYPTED,
    );
    if (encrypted && !this.told) {
      this.told = true;
      this.onDecrypt();
    }
    return this.inner.decode(payloads);
  }
}
