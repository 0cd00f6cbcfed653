/**
 * The cluster's Temporal Web UI: the standalone UI server (built from its Go module, lab/cluster/build.ts) on the
 * deployment's UI port plus the cluster offset, talking to the cluster's frontend, and decoding payloads through
 * a codec server of the cluster's own.
 *
 * The codec server is the demo's (src/codec/demo-codec.ts): bound to 127.0.0.1, answering only loopback
 * Host names and the UI's origin, /encode off, no bearer token (the UI has no sign-in here, so it has no token to
 * forward). docs/operations.md says what a deployment does instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startDemoCodecServer } from '../../src/codec/demo-codec';
import { CLUSTER_NAMESPACE } from './versions';

export class ClusterUiError extends Error {
  override readonly name = 'ClusterUiError';
}

export interface UiSettings {
  readonly frontend: string;
  readonly port: number;
  readonly codecEndpoint?: string;
}

/** The UI server's configuration (YAML is a superset of JSON): loopback only, our namespace, our codec. */
export function uiConfig(s: UiSettings): Record<string, unknown> {
  return {
    temporalGrpcAddress: s.frontend,
    host: '127.0.0.1',
    port: s.port,
    enableUi: true,
    defaultNamespace: CLUSTER_NAMESPACE,
    refreshInterval: '1m',
    disableNewsFetch: true,
    cors: { allowOrigins: [`http://localhost:${s.port}`, `http://127.0.0.1:${s.port}`], cookieInsecure: true },
    codec: s.codecEndpoint ? { endpoint: s.codecEndpoint, passAccessToken: false, includeCredentials: false } : {},
  };
}

export interface ClusterUi {
  readonly url: string;
  readonly codecUrl?: string;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

async function waitForHttp(url: string, child: ChildProcess, logFile: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < end) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new ClusterUiError(`the Web UI server exited (${child.exitCode ?? child.signalCode}); see ${logFile}`);
    }
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (r.ok) return;
      last = `HTTP ${r.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new ClusterUiError(
    `the Web UI server did not answer at ${url} within ${timeoutMs / 1000} s (${last}); see ${logFile}`,
  );
}

/** Starts the codec server (when codec keys are configured) and the Web UI server; waits until the UI answers. */
export async function startClusterUi(
  uiServer: string,
  dir: string,
  s: Omit<UiSettings, 'codecEndpoint'>,
): Promise<ClusterUi> {
  const codecServer = await startDemoCodecServer(s.port);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'ledgerloop.yaml'),
    JSON.stringify(uiConfig({ ...s, ...(codecServer ? { codecEndpoint: codecServer.url } : {}) }), null, 2),
  );
  const logFile = path.join(dir, 'ui-server.log');
  const out = fs.openSync(logFile, 'a');
  const child = spawn(uiServer, ['--root', dir, '--config', '.', '--env', 'ledgerloop', 'start'], {
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const url = `http://127.0.0.1:${s.port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    }
    await codecServer?.close();
  };
  try {
    await waitForHttp(`${url}/api/v1/settings`, child, logFile);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, ...(codecServer ? { codecUrl: codecServer.url } : {}), pid: child.pid, stop };
}
