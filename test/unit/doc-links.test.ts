/**
 * The package ships what its README links to: the Markdown reached from README.md, and every file those link to,
 * are in what `npm pack` puts in the tarball (package.json `files`), and each link and #anchor resolves.
 * scripts/check-package.sh walks the same links inside the real unpacked tarball. Every other Markdown file git
 * tracks (outside node_modules), reached from the README or not, resolves too.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the plain-node script check-package.sh runs
const { checkLinks } = require('../../scripts/check-doc-links.cjs') as {
  checkLinks(root: string, entries?: string[]): { broken: string[]; files: number; links: number };
};

const ROOT = path.resolve(__dirname, '..', '..');

test('every relative link and #anchor from the README resolves in the repository', () => {
  const { broken, files, links } = checkLinks(ROOT);
  expect(broken).toEqual([]);
  expect(files).toBeGreaterThan(5);
  expect(links).toBeGreaterThan(20);
});

test('every relative link and #anchor in every tracked Markdown file resolves, reached from the README or not', () => {
  const tracked = execFileSync('git', ['ls-files', '-z', '*.md'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f !== '' && !f.split('/').includes('node_modules'));
  expect(tracked).toEqual(
    expect.arrayContaining(['README.md', 'docs/architecture.md', 'docs/cli.md', 'docs/testing.md']),
  );
  const { broken, files } = checkLinks(ROOT, tracked);
  expect(broken).toEqual([]);
  expect(files).toBeGreaterThanOrEqual(tracked.length);
});

test('every file the README reaches is one npm pack ships, and the links resolve among those files alone', () => {
  // The file list `files` gives (no build: dist/ is not what the README links to).
  const out = execFileSync('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], { cwd: ROOT, encoding: 'utf8' });
  const shipped = (JSON.parse(out) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
  const pkg = mkdtempSync(path.join(os.tmpdir(), 'll-packed-docs-'));
  for (const f of shipped.filter((p) => p.endsWith('.md') || p.startsWith('docs/'))) {
    mkdirSync(path.dirname(path.join(pkg, f)), { recursive: true });
    cpSync(path.join(ROOT, f), path.join(pkg, f));
  }
  expect(checkLinks(pkg).broken).toEqual([]);
});

test('a link to a missing file, or to a heading that is not there, is reported (the check can fail)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'll-links-'));
  mkdirSync(path.join(dir, 'docs'));
  writeFileSync(
    path.join(dir, 'docs', 'a.md'),
    '# A page\n\n## Who is who: roles (v2)\n\n[back](../README.md#start)\n',
  );
  writeFileSync(
    path.join(dir, 'README.md'),
    '# Start\n\n[a](docs/a.md#who-is-who-roles-v2) [gone](docs/gone.md) [bad](docs/a.md#nowhere) `[code](x.md)`\n\n```\n[fenced](y.md)\n```\n',
  );
  const { broken } = checkLinks(dir);
  expect(broken).toEqual([
    'README.md: docs/gone.md (no such file)',
    'README.md: docs/a.md#nowhere (no heading #nowhere in docs/a.md)',
  ]);
});
