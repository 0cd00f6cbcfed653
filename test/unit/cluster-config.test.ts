/** The local cluster's configuration: one port base, a server config on PostgreSQL, no secret on a command line. */
import { serverConfig } from '../../src/cluster/temporal-server';
import { clusterPorts, DEFAULT_PORT_BASE, portBaseFromEnv } from '../../src/cluster/versions';

describe('cluster ports', () => {
  it('come from one base and never collide', () => {
    const ports = clusterPorts(20_000);
    expect(ports.frontend).toBe(20_233);
    expect(ports.postgres).toBe(20_432);
    const values = Object.values(ports);
    expect(new Set(values).size).toBe(values.length);
  });

  it('refuse a base that would leave the port range, and a base that is not a number', () => {
    expect(() => clusterPorts(80)).toThrow(RangeError);
    expect(() => clusterPorts(65_000)).toThrow(RangeError);
    expect(() => portBaseFromEnv({ LEDGERLOOP_CLUSTER_PORT_BASE: '17k' })).toThrow(/whole number/);
    expect(portBaseFromEnv({})).toBe(DEFAULT_PORT_BASE);
  });
});

describe('the server configuration', () => {
  const ports = clusterPorts(DEFAULT_PORT_BASE);
  const config = serverConfig(ports, 's3cret-pw', '/tmp/dc.yaml') as {
    persistence: { defaultStore: string; visibilityStore: string; datastores: Record<string, { sql: { pluginName: string; connectAddr: string; password: string; databaseName: string } }> };
    services: Record<string, { rpc: { grpcPort: number; bindOnLocalHost: boolean } }>;
  };

  it('puts persistence and visibility on the cluster PostgreSQL', () => {
    const stores = config.persistence.datastores;
    expect(stores[config.persistence.defaultStore]?.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal', connectAddr: `127.0.0.1:${ports.postgres}` });
    expect(stores[config.persistence.visibilityStore]?.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal_visibility' });
  });

  it('binds every service to loopback on the cluster ports', () => {
    expect(config.services['frontend']?.rpc).toMatchObject({ grpcPort: ports.frontend, bindOnLocalHost: true });
    for (const name of ['frontend', 'history', 'matching', 'worker']) expect(config.services[name]?.rpc.bindOnLocalHost).toBe(true);
  });
});
