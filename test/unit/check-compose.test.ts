/**
 * scripts/check-compose.sh holds the compose file to the one source both deployments read (deploy/deployment.json):
 * it passes on the repository as it is, and fails, naming what drifted, on a copy where one thing was changed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const FILES = [
  'docker-compose.yml',
  'Dockerfile',
  'src/server/search-attributes.ts',
  'deploy',
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
    expect(r.err).toContain('temporal: image temporalio/server:');
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
});
