/**
 * The demo's payload encryption when no keys are configured: a demo key generated once and kept in
 * `<repo>/.data/codec-demo-keys` (git-ignored, mode 0600), so workflows the demo left in its dev server database
 * stay readable in the Web UI on the next `npm start`. Never use it for anything but the local demo.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CODEC_KEY_ID_ENV, CODEC_KEYS_ENV, codecFromEnv, generateCodecKeys, parseCodecKeys } from './data-converter';

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
