/**
 * Where the running ledgerloop came from, as a dependency spec a new project can install it by (`ledgerloop init`):
 *
 *   a folder that is not inside node_modules (a clone, or a folder npm linked)   file:<that folder>
 *   installed from a tarball or a folder (npx --package ./x.tgz, npm i ../x)    file:<the tarball or folder>
 *   installed from a registry (or where the lockfile says nothing)              ^<this version>
 *
 * npm records what it installed from in the lockfile of the folder that holds `node_modules`: the hidden one
 * (`node_modules/.package-lock.json`, also what `npx` leaves in its cache folder) or `package-lock.json`, with paths
 * relative to that folder. Only those files are read; nothing is asked of a registry.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface LockEntry {
  readonly version?: unknown;
  readonly resolved?: unknown;
  readonly link?: unknown;
}

function lockEntry(prefix: string, key: string): LockEntry | undefined {
  for (const lock of [
    path.join(prefix, 'node_modules', '.package-lock.json'),
    path.join(prefix, 'package-lock.json'),
  ]) {
    if (!existsSync(lock)) continue;
    try {
      const parsed = JSON.parse(readFileSync(lock, 'utf8')) as { packages?: Record<string, LockEntry> };
      const entry = parsed.packages?.[key];
      if (entry !== undefined) return entry;
    } catch {
      // an unreadable lockfile says nothing
    }
  }
  return undefined;
}

/** A registry's tarball URL for this package (`…/ledgerloop/-/ledgerloop-<version>.tgz`). */
const REGISTRY_TARBALL = /\/ledgerloop\/-\/ledgerloop-[^/]+\.tgz$/;

/**
 * The spec for the ledgerloop whose package folder is `root` (real path, as Node's `__dirname` gives it) at
 * `version`.
 */
export function ledgerloopSourceSpec(root: string, version: string): string {
  const marker = `${path.sep}node_modules${path.sep}`;
  const at = root.indexOf(marker);
  if (at < 0) return `file:${root}`;
  const prefix = root.slice(0, at);
  const key = path.relative(prefix, root).split(path.sep).join('/');
  const entry = lockEntry(prefix, key);
  const resolved = typeof entry?.resolved === 'string' ? entry.resolved : undefined;
  if (resolved === undefined) return `^${version}`;
  if (/^https?:\/\//.test(resolved)) return REGISTRY_TARBALL.test(resolved) ? `^${version}` : resolved;
  // `file:<relative>` for a tarball; a bare relative path for a linked folder.
  return `file:${path.resolve(prefix, resolved.replace(/^file:/, ''))}`;
}
