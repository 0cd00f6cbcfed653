/** The local cluster's configuration: the deployment's ports shifted by one offset, a server config on PostgreSQL. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLUSTER_DIR, workerHost } from '../../lab/cluster/cluster';
import { serverConfig, serverEnv } from '../../lab/cluster/temporal-server';
import {
  clusterPorts,
  DEFAULT_PORT_OFFSET,
  DEPLOYMENT_PORTS,
  DEPLOYMENT_TASK_QUEUE,
  missingEnv,
  portOffsetFromEnv,
  REQUIRED_ENV,
} from '../../lab/cluster/versions';
import { CODEC_KEYS_ENV } from '../../src/codec/data-converter';
import { IDENTITY_ISSUERS_ENV } from '../../src/identity/config';
import { generateCapabilityTrust } from '../../src/capability/capability-keys';
import { workerProcessEnv } from '../../lab/spawn-worker';

describe('cluster ports', () => {
  it("are the deployment's ports plus one offset, and never collide", () => {
    const ports = clusterPorts(20_000);
    expect(ports.frontend).toBe(DEPLOYMENT_PORTS.frontend + 20_000);
    expect(ports.postgres).toBe(DEPLOYMENT_PORTS.postgres + 20_000);
    expect(clusterPorts().frontend).toBe(17_233);
    const values = Object.values(ports);
    expect(new Set(values).size).toBe(values.length);
  });

  it('refuse an offset that would leave the port range, and an offset that is not a number', () => {
    expect(() => clusterPorts(-6_000)).toThrow(RangeError);
    expect(() => clusterPorts(60_000)).toThrow(RangeError);
    expect(() => portOffsetFromEnv({ LEDGERLOOP_CLUSTER_PORT_OFFSET: '10k' })).toThrow(/whole number/);
    expect(portOffsetFromEnv({})).toBe(DEFAULT_PORT_OFFSET);
  });

  it('refuse an offset that puts a membership port past 32767, which the server stores as a smallint', () => {
    // 6933 + 27000 = 33933: the server would exit at start-up ("out of range for type smallint").
    expect(() => clusterPorts(27_000)).toThrow(/frontendMembership 33933 .* 32767/);
    // The positive control: the largest offset whose membership ports all fit.
    const highest =
      32_767 -
      Math.max(
        ...Object.entries(DEPLOYMENT_PORTS)
          .filter(([k]) => /Membership$/.test(k))
          .map(([, p]) => p),
      );
    expect(clusterPorts(highest).workerMembership).toBe(32_767);
    expect(() => clusterPorts(highest + 1)).toThrow(RangeError);
  });
});

describe('required environment', () => {
  it('accepts either name of an A|B entry and names what is missing', () => {
    const required = ['A|B', 'C'];
    expect(missingEnv(required, { B: 'x', C: 'y' })).toEqual([]);
    expect(missingEnv(required, { A: '', C: 'y' })).toEqual(['A|B']);
    expect(missingEnv(required, {})).toEqual(['A|B', 'C']);
  });
});

describe('the server configuration', () => {
  const ports = clusterPorts(DEFAULT_PORT_OFFSET);
  const config = serverConfig(ports, 's3cret-pw', '/tmp/dc.yaml') as {
    persistence: {
      defaultStore: string;
      visibilityStore: string;
      datastores: Record<
        string,
        { sql: { pluginName: string; connectAddr: string; password: string; databaseName: string } }
      >;
    };
    services: Record<string, { rpc: { grpcPort: number; bindOnLocalHost: boolean } }>;
  };

  it('puts persistence and visibility on the cluster PostgreSQL', () => {
    const stores = config.persistence.datastores;
    expect(stores[config.persistence.defaultStore]?.sql).toMatchObject({
      pluginName: 'postgres12',
      databaseName: 'temporal',
      connectAddr: `127.0.0.1:${ports.postgres}`,
    });
    expect(stores[config.persistence.visibilityStore]?.sql).toMatchObject({
      pluginName: 'postgres12',
      databaseName: 'temporal_visibility',
    });
  });

  it('binds every service to loopback on the cluster ports', () => {
    expect(config.services['frontend']?.rpc).toMatchObject({ grpcPort: ports.frontend, bindOnLocalHost: true });
    for (const name of ['frontend', 'internal-frontend', 'history', 'matching', 'worker'])
      expect(config.services[name]?.rpc.bindOnLocalHost).toBe(true);
  });

  it("runs the internal frontend, through which the server's own services pass the authorizer", () => {
    expect(config.services['internal-frontend']?.rpc.grpcPort).toBe(ports.internalFrontend);
  });

  it('gives the server the issuers file and none of the supervisor’s Temporal credentials', () => {
    const env = serverEnv(
      { configFile: '/c.yaml', logFile: '/l.log', issuersFile: '/cluster/temporal/identity-issuers.json' },
      { PATH: '/bin', LEDGERLOOP_TEMPORAL_TOKEN_FILE: '/admin.jwt', TEMPORAL_API_KEY: 'k' },
    );
    expect(env).toMatchObject({
      PATH: '/bin',
      LEDGERLOOP_IDENTITY_ISSUERS: '/cluster/temporal/identity-issuers.json',
      LEDGERLOOP_FRONTEND_NAMESPACE: 'default',
    });
    expect(env['LEDGERLOOP_TEMPORAL_TOKEN_FILE']).toBeUndefined();
    expect(env['TEMPORAL_API_KEY']).toBeUndefined();
  });
});

describe('a worker host', () => {
  const hostDir = path.join(CLUSTER_DIR, 'hosts', 'unit-required-env');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'll-host-'));
  const bundlePath = path.join(scratch, 'bundle.js');
  const issuers = path.join(scratch, 'issuers.json');
  fs.writeFileSync(bundlePath, '// bundle');
  fs.writeFileSync(issuers, '{}');
  const previousKeys = process.env[CODEC_KEYS_ENV];
  beforeAll(() => {
    process.env[CODEC_KEYS_ENV] = 'k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
  });
  afterAll(() => {
    if (previousKeys === undefined) delete process.env[CODEC_KEYS_ENV];
    else process.env[CODEC_KEYS_ENV] = previousKeys;
    fs.rmSync(hostDir, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  });
  const envOf = (shared: {
    transcriptUrl?: string;
    temporalTokenFile?: string;
    quotaUrl?: string;
  }): Record<string, string> => {
    const stack = {
      bundlePath,
      workerEnv: { ...generateCapabilityTrust().workerEnv, [IDENTITY_ISSUERS_ENV]: issuers },
    };
    const host = workerHost(stack, 'unit-required-env', shared);
    // Nothing inherited but the supervisor's own (admin) token file, which the host's must replace: the host
    // must be given every variable the deployment lists for a worker.
    return workerProcessEnv(
      {
        address: '127.0.0.1:17233',
        taskQueue: DEPLOYMENT_TASK_QUEUE,
        services: { wallet: 'http://127.0.0.1:1' },
        ...host,
      },
      shared.temporalTokenFile ? { LEDGERLOOP_TEMPORAL_TOKEN_FILE: '/cluster/credentials/admin.jwt' } : {},
    );
  };
  const token = '/cluster/credentials/worker-unit.jwt';

  it('is given every variable deploy/deployment.json lists for a worker, and its own copies of files', () => {
    const url = 'postgres://ledgerloop@127.0.0.1:15432/ledgerloop';
    const env = envOf({ transcriptUrl: url, quotaUrl: url, temporalTokenFile: token });
    expect(missingEnv(REQUIRED_ENV.worker, env)).toEqual([]);
    // Its own worker token, not the supervisor's admin token it would otherwise inherit.
    expect(env['LEDGERLOOP_TEMPORAL_TOKEN_FILE']).toBe(token);
    expect(env[IDENTITY_ISSUERS_ENV]?.startsWith(hostDir)).toBe(true);
    expect(env['LEDGERLOOP_WORKFLOW_BUNDLE']?.startsWith(hostDir)).toBe(true);
  });

  it('misses the shared transcript and quota stores when none is given (the check can fail)', () => {
    expect(missingEnv(REQUIRED_ENV.worker, envOf({ temporalTokenFile: token }))).toEqual([
      'LEDGERLOOP_TRANSCRIPT_URL',
      'LEDGERLOOP_QUOTA_URL',
    ]);
  });

  it('misses its frontend token when none is given', () => {
    expect(missingEnv(REQUIRED_ENV.worker, envOf({ transcriptUrl: 'postgres://x', quotaUrl: 'postgres://x' }))).toEqual(
      ['LEDGERLOOP_TEMPORAL_TOKEN_FILE'],
    );
  });
});
