/** `ledgerloop --version` reports this package, the SDK actually installed, and the deployment's pinned server. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { versionLine } from '../../cli/version';
import deployment from '../../deploy/deployment.json';
import pkg from '../../package.json';

const ROOT = path.join(__dirname, '..', '..');

test('the version line names the package, the installed SDK and the pinned server', () => {
  const sdk = (
    JSON.parse(readFileSync(path.join(ROOT, 'node_modules', '@temporalio', 'worker', 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  const line = versionLine();
  expect(line).toContain(`ledgerloop ${pkg.version}`);
  expect(line).toContain(`SDK ${sdk}`);
  expect(line).toContain(`Temporal server ${deployment.versions.temporalServer}`);
});

test('the CLI prints it for --version and -V, and exits 0', () => {
  for (const flag of ['--version', '-V']) {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'ledgerloop.cjs'), flag], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(versionLine());
  }
});
