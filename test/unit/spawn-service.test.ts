/**
 * `spawnServiceEntry` resolves on the child's ready line and otherwise rejects naming why, with the child's
 * stderr, and leaves no child running: each way out is shown against entries written here.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnServiceEntry } from '../../services/spawn';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spawn-service-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A service entry whose body is `code` (plain JavaScript, run through the package's loader). */
function entry(name: string, code: string): string {
  const file = path.join(dir, `${name}.js`);
  fs.writeFileSync(file, code);
  return file;
}

const READY = `process.stdout.write(JSON.stringify({ service: 'probe', url: 'http://127.0.0.1:1', pid: process.pid }) + '\\n');`;

test('a child that prints its ready line resolves with it, and stop() ends the child', async () => {
  const file = entry('ready', `${READY}\nsetInterval(() => {}, 1000);`);
  const s = await spawnServiceEntry('probe', file, { dbPath: ':memory:', admin: false });
  expect({ name: s.name, url: s.url, pid: s.pid }).toEqual({
    name: 'probe',
    url: 'http://127.0.0.1:1',
    pid: s.child.pid,
  });
  await s.stop();
  expect(s.child.exitCode !== null || s.child.signalCode !== null).toBe(true);
});

test('a child that exits before its ready line rejects naming the exit, with its stderr', async () => {
  const file = entry('dies', `process.stderr.write('cannot open the store\\n'); process.exit(3);`);
  await expect(spawnServiceEntry('probe', file, { dbPath: ':memory:', admin: false })).rejects.toThrow(
    /probe service did not start: exited early \(code 3, signal null\)\n--- stderr ---\ncannot open the store/,
  );
});

test('a first line that is not the ready line of that service rejects and stops the child', async () => {
  const pidFile = path.join(dir, 'other.pid');
  const code = `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
process.stdout.write(JSON.stringify({ service: 'other', url: 'http://x', pid: process.pid }) + '\\n');
setInterval(() => {}, 1000);`;
  await expect(spawnServiceEntry('probe', entry('other', code), { dbPath: ':memory:', admin: false })).rejects.toThrow(
    /probe service did not start: unexpected first stdout line: \{"service":"other"/,
  );
  const pid = Number(fs.readFileSync(pidFile, 'utf8'));
  expect(() => process.kill(pid, 0)).toThrow(); // the child is gone
});

test('no ready line within the timeout rejects naming the timeout', async () => {
  const file = entry('silent', 'setInterval(() => {}, 1000);');
  await expect(
    spawnServiceEntry('probe', file, { dbPath: ':memory:', admin: false, readyTimeoutMs: 300 }),
  ).rejects.toThrow(/probe service did not start: no ready line within 300 ms/);
});
