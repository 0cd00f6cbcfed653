/** The codec server the demo starts for its Web UI, with the keys of the process environment. */
import { startCodecServer, type CodecServer } from './codec-server';
import { codecFromEnv } from './data-converter';

/**
 * Starts a codec server on a free loopback port that the Web UI on `uiPort` (localhost or 127.0.0.1) may call.
 * Undefined when no codec keys are configured.
 */
export async function startDemoCodecServer(uiPort: number): Promise<CodecServer | undefined> {
  const codec = codecFromEnv();
  if (!codec) return undefined;
  return startCodecServer({
    codec,
    allowedOrigins: [`http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`],
    health: () => ({ keyIds: codec.keyIds, activeKeyId: codec.activeKeyId }),
  });
}
