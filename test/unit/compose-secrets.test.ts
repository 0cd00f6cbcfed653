/**
 * Every secret file of the compose deployment is written mode 0600, in place (compose mounts a file by its inode:
 * a refreshed token must reach the running container), and only public values are printed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeSecretFile, writeTrialIdentity } from '../../lab/compose-secrets';
import { parseIdentityConfig } from '../../src/identity/config';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'compose-secrets-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const mode = (f: string): number => fs.statSync(f).mode & 0o777;

test('a secret file is 0600 even over a looser file, and keeps its inode when rewritten', () => {
  const f = path.join(dir, 'loose.txt');
  fs.writeFileSync(f, 'old', { mode: 0o644 });
  fs.chmodSync(f, 0o644);
  const inode = fs.statSync(f).ino;
  writeSecretFile(f, 'new');
  expect(mode(f)).toBe(0o600);
  expect(fs.statSync(f).ino).toBe(inode);
  expect(fs.readFileSync(f, 'utf8')).toBe('new');
});

test('gen-compose-secrets writes every private file 0600 and prints only the public key set', () => {
  const out = path.join(dir, 'compose');
  const r = spawnSync(
    process.execPath,
    ['-r', 'tsx/cjs', path.join(__dirname, '..', '..', 'scripts', 'gen-compose-secrets.ts'), out],
    { encoding: 'utf8', cwd: path.join(__dirname, '..', '..') },
  );
  expect(r.status).toBe(0);
  const files = [
    'codec-keys',
    'secrets/capability-signing-key.json',
    'secrets/relay-signing-key.json',
    'secrets/identity-issuer-key.json',
    'secrets/worker.jwt',
    'secrets/admin.jwt',
    'secrets/alice.jwt',
  ].map((f) => path.join(out, f));
  for (const f of files) expect([f, mode(f)]).toEqual([f, 0o600]);
  // The public issuer file is what the frontend and the workers read: valid, and public keys only.
  expect(
    parseIdentityConfig(JSON.parse(fs.readFileSync(path.join(out, 'identity-issuers.json'), 'utf8'))),
  ).toHaveLength(1);
  // stdout is for .env: the services' public keys, and no private key (`"d":`) and no token.
  expect(r.stdout).toMatch(/^LEDGERLOOP_CAPABILITY_KEYS='\{"keys":/);
  expect(r.stdout).not.toContain('"d":');
  expect(r.stdout).not.toContain(fs.readFileSync(path.join(out, 'secrets', 'worker.jwt'), 'utf8'));
}, 60_000);

test('running it again refreshes the tokens in place and keeps the issuer key', async () => {
  const out = path.join(dir, 'again');
  await writeTrialIdentity(out, 600);
  const token = path.join(out, 'secrets', 'worker.jwt');
  const key = fs.readFileSync(path.join(out, 'secrets', 'identity-issuer-key.json'), 'utf8');
  const before = { ino: fs.statSync(token).ino, text: fs.readFileSync(token, 'utf8') };
  // A new token can differ from the old only once its `iat` (whole seconds) can: poll for the clock's next second.
  const iat = (JSON.parse(Buffer.from(before.text.split('.')[1]!, 'base64url').toString()) as { iat: number }).iat;
  expect(Number.isInteger(iat)).toBe(true);
  while (Math.floor(Date.now() / 1000) <= iat) await new Promise((r) => setTimeout(r, 20));
  await writeTrialIdentity(out, 600);
  expect(fs.statSync(token).ino).toBe(before.ino);
  expect(fs.readFileSync(token, 'utf8')).not.toBe(before.text);
  expect(fs.readFileSync(path.join(out, 'secrets', 'identity-issuer-key.json'), 'utf8')).toBe(key);
});
