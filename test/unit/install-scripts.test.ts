/**
 * A fresh clone's `npm ci` must build what the runtime needs. npm 11.16+ reads `allowScripts` in package.json and
 * warns about dependencies whose install scripts it does not cover; npm 12 skips those scripts. Without
 * better-sqlite3's build the services cannot open their databases, so every package the lockfile marks as having
 * an install script is named here, allowed or denied on purpose.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

function withInstallScripts(lock: { packages: Record<string, { hasInstallScript?: boolean }> }): string[] {
  const names = Object.entries(lock.packages)
    .filter(([, p]) => p.hasInstallScript)
    .map(([where]) => where.replace(/^.*node_modules\//, ''));
  return [...new Set(names)].sort();
}

describe("the lockfile's install scripts", () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    allowScripts?: Record<string, boolean>;
  };
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as Parameters<
    typeof withInstallScripts
  >[0];

  it('are each named in allowScripts, so npm 12 builds them as npm 11 does', () => {
    const named = Object.keys(pkg.allowScripts ?? {});
    expect(withInstallScripts(lock).filter((name) => !named.includes(name))).toEqual([]);
  });

  it("allow better-sqlite3's build and esbuild's binary check, which the services and the loader need", () => {
    expect(pkg.allowScripts?.['better-sqlite3']).toBe(true);
    expect(pkg.allowScripts?.['esbuild']).toBe(true);
  });

  it('reads the lockfile it checks (a lockfile without install scripts would pass for nothing)', () => {
    expect(withInstallScripts(lock)).toEqual(expect.arrayContaining(['better-sqlite3', 'esbuild']));
  });
});
