/**
 * The codec server the demo starts for its Web UI, with the keys of the process environment.
 *
 * It runs with `{ kind: 'insecure-dev' }` auth, and only here: the dev server's Web UI has no sign-in, so it has no
 * access token to forward as `Authorization: Bearer` (the UI forwards the signed-in user's token, and only to an
 * https codec endpoint). The server is bound to 127.0.0.1 on a free port, answers only to loopback Host names, and
 * refuses every browser origin but the demo's UI; /encode is off. Deployments use `ledgerloop codec-server` with
 * LEDGERLOOP_CODEC_TOKEN (docs/operations.md, "Trust model: codec server and transport").
 */
import { startCodecServer, type CodecServer } from './codec-server';
import { codecFromEnv } from '../../src/codec/data-converter';

/**
 * Starts a codec server on a free loopback port that the Web UI on `uiPort` (localhost or 127.0.0.1) may call.
 * Undefined when no codec keys are configured.
 */
export async function startDemoCodecServer(uiPort: number): Promise<CodecServer | undefined> {
  const codec = codecFromEnv();
  if (!codec) return undefined;
  return startCodecServer({
    codec,
    auth: { kind: 'insecure-dev' },
    host: '127.0.0.1',
    allowedOrigins: [`http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`],
  });
}
