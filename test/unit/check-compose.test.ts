/**
 * scripts/check-compose.sh holds the compose file to the one source both deployments read (deploy/deployment.json),
 * to the frontend's authorizer and to the no-leak rules: it passes on the repository as it is, and fails, naming
 * what drifted, on a copy where one thing was changed (one mutation per rule).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const FILES = [
  'docker-compose.yml',
  'Dockerfile',
  '.dockerignore',
  'src/domain/search-attributes.ts',
  'deploy',
  'lab/cluster/server/go.mod',
  'scripts/check-compose.sh',
  'scripts/gen-certs.sh',
];
const hasPyYaml = spawnSync('python3', ['-c', 'import yaml']).status === 0;

function copyRepo(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'll-compose-'));
  for (const f of FILES) fs.cpSync(path.join(ROOT, f), path.join(dir, f), { recursive: true });
  return dir;
}

function check(dir: string): { code: number | null; err: string } {
  const r = spawnSync('bash', [path.join(dir, 'scripts', 'check-compose.sh')], { encoding: 'utf8' });
  return { code: r.status, err: r.stderr };
}

function edit(dir: string, file: string, from: string | RegExp, to: string): void {
  const p = path.join(dir, file);
  const before = fs.readFileSync(p, 'utf8');
  const after = before.replace(from, to);
  expect(after).not.toBe(before);
  fs.writeFileSync(p, after);
}

(hasPyYaml ? describe : describe.skip)('check-compose against deploy/deployment.json', () => {
  const dirs: string[] = [];
  const fresh = (): string => {
    const d = copyRepo();
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('passes on the repository as it is', () => {
    const r = check(fresh());
    expect(r.err).not.toMatch(/check-compose: [a-z-]+:/);
    expect(r.code).toBe(0);
  });

  it('fails when the Web UI image drifts from the version the cluster builds', () => {
    const d = fresh();
    edit(d, 'docker-compose.yml', /temporalio\/ui:[0-9.]+/, 'temporalio/ui:2.40.0');
    const r = check(d);
    expect(r.code).toBe(1);
    expect(r.err).toContain('temporal-ui: image temporalio/ui:2.40.0 is not the Web UI');
  });

  it('fails when the one source moves the server version and compose does not follow', () => {
    const d = fresh();
    edit(d, 'deploy/deployment.json', /"temporalServer": "[0-9.]+"/, '"temporalServer": "1.99.0"');
    const r = check(d);
    expect(r.code).toBe(1);
    expect(r.err).toContain('temporal: image ledgerloop-temporal:');
  });

  it('fails when a worker loses a variable the deployment lists (the shared transcript store)', () => {
    const d = fresh();
    edit(d, 'docker-compose.yml', /\n\s+LEDGERLOOP_TRANSCRIPT_URL: [^\n]+/, '');
    const r = check(d);
    expect(r.code).toBe(1);
    expect(r.err).toContain('worker: LEDGERLOOP_TRANSCRIPT_URL is not set');
  });

  it('fails when a published port differs from the one source', () => {
    const d = fresh();
    edit(d, 'deploy/deployment.json', /"ui": 8080/, '"ui": 8090');
    const r = check(d);
    expect(r.code).toBe(1);
    expect(r.err).toContain('temporal-ui: does not publish ui as 127.0.0.1:8090:PORT');
  });

  describe('compose without leaks', () => {
    it('fails when .dockerignore lets .env files into the image', () => {
      const d = fresh();
      edit(d, '.dockerignore', /^\.env\n/m, '');
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toContain('.dockerignore: does not exclude .env');
    });

    it('fails when .dockerignore lets keys into the image', () => {
      const d = fresh();
      edit(d, '.dockerignore', /^\*\*\/\*\.key\n/m, '');
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toContain('.dockerignore: does not exclude **/*.key');
    });

    it('fails when .dockerignore lets certificates into the image', () => {
      const d = fresh();
      edit(d, '.dockerignore', /^\*\*\/\*\.pem\n/m, '');
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toContain('.dockerignore: does not exclude **/*.pem');
    });

    it('fails when a container mounts the whole certificate folder', () => {
      const d = fresh();
      edit(
        d,
        'docker-compose.yml',
        '      - ${LEDGERLOOP_CERTS_DIR:-./.data/compose/certs}/worker.pem:/certs/worker.pem:ro\n',
        '      - ${LEDGERLOOP_CERTS_DIR:-./.data/compose/certs}:/certs:ro\n',
      );
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toContain('worker: mounts the whole certificate folder');
    });

    it("fails when a container holds another's key", () => {
      const d = fresh();
      // The Web UI given the admin's key instead of its own.
      edit(d, 'docker-compose.yml', /(    secrets:\n      - )ui_tls_key\n/, '$1admin_tls_key\n');
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toContain('temporal-ui: holds admin.key, which is not its own certificate or key');
    });

    it('fails when the capability signing key is an environment variable again', () => {
      const d = fresh();
      edit(
        d,
        'docker-compose.yml',
        'LEDGERLOOP_CAPABILITY_SIGNING_KEY: /run/secrets/capability_signing_key',
        'LEDGERLOOP_CAPABILITY_SIGNING_KEY: ${LEDGERLOOP_CAPABILITY_SIGNING_KEY:?set LEDGERLOOP_CAPABILITY_SIGNING_KEY}',
      );
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toContain('LEDGERLOOP_CAPABILITY_SIGNING_KEY is interpolated from the environment');
    });

    it('fails when scripts/gen-certs.sh leaves keys readable by others', () => {
      const d = fresh();
      edit(d, 'scripts/gen-certs.sh', 'chmod 600 ./*.key', 'chmod 644 ./*.key');
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/gen-certs\.sh leaves keys readable by others or missing \(7 keys; [a-z-]+\.key=644/);
    });
  });

  describe('authorization at the frontend', () => {
    it('fails when Temporal is the stock image, which has no authorizer', () => {
      const d = fresh();
      edit(
        d,
        'docker-compose.yml',
        /    image: ledgerloop-temporal:([0-9.]+)\n    build:\n      context: \.\/deploy\/temporal\n      additional_contexts:\n        server: \.\/lab\/cluster\/server\n/,
        '    image: temporalio/server:$1\n',
      );
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toContain('temporal: the stock temporalio/server image has no authorizer');
    });

    it("fails when the internode CA is the clients' CA", () => {
      const d = fresh();
      edit(
        d,
        'docker-compose.yml',
        'TEMPORAL_TLS_SERVER_CA_CERT: /certs/internode-ca.pem',
        'TEMPORAL_TLS_SERVER_CA_CERT: /certs/ca.pem',
      );
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toContain("temporal: the internode CA is the clients' CA");
    });

    it("fails when the viewer's name is not the Web UI certificate's", () => {
      const d = fresh();
      edit(
        d,
        'docker-compose.yml',
        'LEDGERLOOP_FRONTEND_VIEWER_CN: temporal-ui',
        'LEDGERLOOP_FRONTEND_VIEWER_CN: temporal-admin',
      );
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toContain("LEDGERLOOP_FRONTEND_VIEWER_CN is not the Web UI certificate's CN");
    });

    it('fails when the server module pins another Temporal than the deployment', () => {
      const d = fresh();
      edit(d, 'lab/cluster/server/go.mod', /go\.temporal\.io\/server v[0-9.]+/, 'go.temporal.io/server v1.31.0');
      const r = check(d);
      expect(r.code).toBe(1);
      expect(r.err).toContain('lab/cluster/server/go.mod does not require go.temporal.io/server v');
    });
  });
});
