/**
 * A folder of workflow bundles for the test stacks, keyed by everything a bundle is made of: its options and a
 * digest of every file it could include (the runtime, the workflows, the lab's interceptors, the examples'
 * tools, the lockfile that pins node_modules). Forty test files each bundling the same code was about a
 * quarter of `npm test`'s CPU; with the cache the first file bundles and the others load that file.
 *
 * A changed file gives a new key, so a stale bundle is never reused. Writes go to a temporary file renamed into
 * place, so two jest workers building the same key at once each leave a whole bundle. The newest 12 are kept.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';

const REPO_ROOT = path.resolve(__dirname, '..');
/** What a bundle can be built from: folders walked for sources, and single files. */
const SOURCE_DIRS = ['src', 'host', 'workflows', 'activities', 'services', 'lab', 'examples'];
const SOURCE_FILES = ['package-lock.json', 'package.json', 'tsconfig.json'];
const SOURCE_EXTENSIONS = /\.(ts|tsx|js|cjs|mjs|json)$/;
const SKIP_DIRS = new Set(['node_modules', 'results', '.data']);
const KEEP = 12;

let sourcesDigest: string | undefined;

/** One digest of every source a bundle could include (memoized: sources do not change under a test run). */
export function digestOfSources(root = REPO_ROOT): string {
  if (root === REPO_ROOT && sourcesDigest !== undefined) return sourcesDigest;
  const hash = createHash('sha256');
  const add = (file: string): void => {
    hash.update(path.relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  };
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(full);
      } else if (entry.isFile() && SOURCE_EXTENSIONS.test(entry.name)) add(full);
    }
  };
  for (const d of SOURCE_DIRS) if (existsSync(path.join(root, d))) walk(path.join(root, d));
  for (const f of SOURCE_FILES) if (existsSync(path.join(root, f))) add(path.join(root, f));
  const digest = hash.digest('hex');
  if (root === REPO_ROOT) sourcesDigest = digest;
  return digest;
}

/**
 * The cached bundle for `options`, built by `build(file)` into the cache when missing. Returns its path.
 * `options` must name everything that changes the bundle besides the sources (interceptors, tools module, ...).
 */
export async function cachedBundle(
  cacheDir: string,
  options: unknown,
  build: (file: string) => Promise<string>,
): Promise<string> {
  const key = createHash('sha256')
    .update(JSON.stringify(options) ?? 'undefined')
    .update(digestOfSources())
    .digest('hex')
    .slice(0, 32);
  const file = path.join(cacheDir, `bundle-${key}.js`);
  if (existsSync(file)) {
    // A bundle in use is the newest: pruning takes the least recently used.
    const now = new Date();
    utimesSync(file, now, now);
    return file;
  }
  mkdirSync(cacheDir, { recursive: true });
  const tmp = path.join(cacheDir, `.building-${key}-${process.pid}-${Date.now()}.js`);
  try {
    await build(tmp);
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
  }
  prune(cacheDir);
  return file;
}

function prune(cacheDir: string): void {
  const bundles = readdirSync(cacheDir)
    .filter((f) => f.startsWith('bundle-') && f.endsWith('.js'))
    .map((f) => ({ f, at: statSync(path.join(cacheDir, f)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { f } of bundles.slice(KEEP)) rmSync(path.join(cacheDir, f), { force: true });
}
