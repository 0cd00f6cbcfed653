import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ConnectionConfigError,
  describeConnection,
  resolveConnectionConfig,
  serverTarget,
} from '../../host/server/connection-config';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'conncfg-'));
const file = (name: string, text: string): string => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
};
const CERT = file('client.pem', '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n');
const KEY = file('client.key', '-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n');
const CA = file('ca.pem', '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n');
// No user config file is read: HOME and XDG_CONFIG_HOME point at an empty folder.
const base = { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'xdg') };

const TOML = file(
  'temporal.toml',
  `[profile.default]
address = "default.example:7233"
namespace = "dflt"

[profile.prod]
address = "prod.tmprl.example:7233"
namespace = "ledgerloop.prod"
api_key = "prod-api-key"

[profile.mtls]
address = "temporal:7233"
namespace = "default"
[profile.mtls.tls]
client_cert_path = "${CERT}"
client_key_path = "${KEY}"
server_ca_cert_path = "${CA}"
server_name = "temporal"
`,
);

test('no configuration: the dev server defaults, plaintext', () => {
  expect(resolveConnectionConfig({}, base)).toEqual({
    address: '127.0.0.1:7233',
    namespace: 'default',
    profile: 'default',
  });
});

test('TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TEMPORAL_API_KEY from the environment; an API key turns TLS on', () => {
  const c = resolveConnectionConfig(
    {},
    { ...base, TEMPORAL_ADDRESS: 'ns.tmprl.example:7233', TEMPORAL_NAMESPACE: 'ns', TEMPORAL_API_KEY: 'k-123' },
  );
  expect(c).toMatchObject({ address: 'ns.tmprl.example:7233', namespace: 'ns', apiKey: 'k-123', tls: true });
  expect(describeConnection(c)).toBe('ns.tmprl.example:7233 namespace=ns tls api-key');
  expect(describeConnection(c)).not.toContain('k-123');
});

test('mTLS from TEMPORAL_TLS_* variables: certificate, key, CA and server name', () => {
  const c = resolveConnectionConfig(
    {},
    {
      ...base,
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_TLS_CLIENT_CERT_PATH: CERT,
      TEMPORAL_TLS_CLIENT_KEY_PATH: KEY,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: CA,
      TEMPORAL_TLS_SERVER_NAME: 'temporal',
    },
  );
  expect(c.tls).toEqual({
    serverNameOverride: 'temporal',
    serverRootCACertificate: fs.readFileSync(CA),
    clientCertPair: { crt: fs.readFileSync(CERT), key: fs.readFileSync(KEY) },
  });
  expect(describeConnection(c)).toBe('temporal:7233 namespace=default mtls');
});

test('a TOML profile file: the default profile, TEMPORAL_PROFILE, and mTLS paths in the profile', () => {
  expect(resolveConnectionConfig({}, { ...base, TEMPORAL_CONFIG_FILE: TOML })).toMatchObject({
    address: 'default.example:7233',
    namespace: 'dflt',
  });
  expect(resolveConnectionConfig({}, { ...base, TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'prod' })).toMatchObject({
    address: 'prod.tmprl.example:7233',
    namespace: 'ledgerloop.prod',
    apiKey: 'prod-api-key',
    tls: true,
    profile: 'prod',
  });
  const m = resolveConnectionConfig({}, { ...base, TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'mtls' });
  expect(m.tls).toMatchObject({
    serverNameOverride: 'temporal',
    clientCertPair: { crt: fs.readFileSync(CERT), key: fs.readFileSync(KEY) },
  });
});

test('precedence: explicit override > TEMPORAL_* variable > profile file > default', () => {
  const env = { ...base, TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'prod', TEMPORAL_NAMESPACE: 'from-env' };
  const c = resolveConnectionConfig({ address: 'flag.example:7233' }, env);
  expect(c).toMatchObject({ address: 'flag.example:7233', namespace: 'from-env', apiKey: 'prod-api-key' });
  expect(resolveConnectionConfig({ namespace: 'flag-ns' }, env).namespace).toBe('flag-ns');
});

test('local: a dev server this process started gets no profile and no credentials', () => {
  const env = { ...base, TEMPORAL_API_KEY: 'cloud-key', TEMPORAL_TLS: '1', TEMPORAL_CONFIG_FILE: TOML };
  expect(resolveConnectionConfig({ address: '127.0.0.1:7400', local: true }, env)).toEqual({
    address: '127.0.0.1:7400',
    namespace: 'default',
  });
  expect(serverTarget({ address: '127.0.0.1:7400', namespace: 'default' })).toMatchObject({ local: true });
  expect(serverTarget({ address: 'temporal:7233', namespace: 'default', external: true }).local).toBeUndefined();
});

test.each([
  [
    'a named config file that does not exist',
    { TEMPORAL_CONFIG_FILE: path.join(dir, 'missing.toml') },
    /does not exist/,
  ],
  ['a profile that is not in the file', { TEMPORAL_CONFIG_FILE: TOML, TEMPORAL_PROFILE: 'nope' }, /nope/],
  [
    'a client certificate without its key',
    { TEMPORAL_TLS_CLIENT_CERT_PATH: CERT },
    /both the client certificate and its key/,
  ],
  [
    'a certificate path that cannot be read',
    { TEMPORAL_TLS_CLIENT_CERT_PATH: `${CERT}.x`, TEMPORAL_TLS_CLIENT_KEY_PATH: KEY },
    /cannot read/,
  ],
  [
    'an API key in plaintext to a remote address',
    { TEMPORAL_ADDRESS: 'remote.example:7233', TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: '0' },
    /plaintext/,
  ],
])('refuses %s', (_what, env, message) => {
  expect(() => resolveConnectionConfig({}, { ...base, ...env })).toThrow(ConnectionConfigError);
  expect(() => resolveConnectionConfig({}, { ...base, ...env })).toThrow(message);
});
