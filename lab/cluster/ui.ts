/**
 * The cluster's Temporal Web UI: the standalone UI server (built from its Go module, lab/cluster/build.ts) on the
 * deployment's UI port plus the cluster offset, talking to the cluster's frontend, and decoding payloads through
 * a codec server of the cluster's own.
 *
 * The UI has no sign-in here, so it gets a viewer's rights and no more: it reaches the frontend through the
 * server binary's `ui-gateway` (lab/cluster/server/gateway.go), which sends every call with the cluster's viewer
 * token in place of any `authorization` the call carried; the frontend refuses the UI's signal, cancel, terminate
 * and reset. Its write buttons are hidden too (`disableWriteActions`), but the frontend is what refuses.
 *
 * The codec server is the demo's (host/codec/demo-codec.ts): bound to 127.0.0.1, answering only loopback
 * Host names and the UI's origin, /encode off, no bearer token (the UI has no sign-in here, so it has no token to
 * forward). docs/operations.md says what a deployment does instead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startDemoCodecServer } from '../../host/codec/demo-codec';
import { CLUSTER_NAMESPACE } from './versions';

export class ClusterUiError extends Error {
  override readonly name = 'ClusterUiError';
}

export interface UiSettings {
  /** Where the UI server sends its gRPC calls: the viewer gateway (or a frontend without an authorizer). */
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
    // A viewer cannot write: the frontend refuses it, and the UI does not offer it.
    disableWriteActions: true,
    cors: { allowOrigins: [`http://localhost:${s.port}`, `http://127.0.0.1:${s.port}`], cookieInsecure: true },
    codec: s.codecEndpoint ? { endpoint: s.codecEndpoint, passAccessToken: false, includeCredentials: false } : {},
  };
}

export interface ClusterUi {
  readonly url: string;
  readonly codecUrl?: string;
  /** The viewer gateway's host:port: what the UI can do at the frontend, anyone here can do through it. */
  readonly gateway: string;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

/** The server binary's `ui-gateway` (viewer token from `tokenFile`): resolves with its address once it listens. */
export async function startViewerGateway(
  serverBinary: string,
  frontend: string,
  tokenFile: string,
  logFile: string,
): Promise<{ readonly address: string; readonly child: ChildProcess }> {
  const child = spawn(
    serverBinary,
    ['ui-gateway', '--listen', '127.0.0.1:0', '--frontend', frontend, '--token-file', tokenFile],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const log = fs.createWriteStream(logFile, { flags: 'a' });
  child.stderr?.pipe(log);
  const address = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new ClusterUiError(`the UI gateway did not start within 15 s: ${seen}`)),
      15_000,
    );
    child.stderr?.on('data', (d: Buffer) => {
      seen = (seen + d.toString()).slice(-2000);
      const m = /ui-gateway: (127\.0\.0\.1:\d+) ->/.exec(seen);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new ClusterUiError(`the UI gateway exited (${code}): ${seen.trim()}`));
    });
  }).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  return { address, child };
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

/**
 * Starts the viewer gateway, the codec server (when codec keys are configured) and the Web UI server; waits until
 * the UI answers.
 */
export async function startClusterUi(
  uiServer: string,
  dir: string,
  s: Omit<UiSettings, 'codecEndpoint'> & { readonly serverBinary: string; readonly viewerTokenFile: string },
): Promise<ClusterUi> {
  fs.mkdirSync(dir, { recursive: true });
  const gateway = await startViewerGateway(
    s.serverBinary,
    s.frontend,
    s.viewerTokenFile,
    path.join(dir, 'ui-gateway.log'),
  );
  const codecServer = await startDemoCodecServer(s.port).catch((err: unknown) => {
    gateway.child.kill('SIGKILL');
    throw err;
  });
  fs.writeFileSync(
    path.join(dir, 'ledgerloop.yaml'),
    JSON.stringify(
      uiConfig({ frontend: gateway.address, port: s.port, ...(codecServer ? { codecEndpoint: codecServer.url } : {}) }),
      null,
      2,
    ),
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
    gateway.child.kill('SIGTERM');
    await codecServer?.close();
  };
  try {
    await waitForHttp(`${url}/api/v1/settings`, child, logFile);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    ...(codecServer ? { codecUrl: codecServer.url } : {}),
    gateway: gateway.address,
    pid: child.pid,
    stop,
  };
}
