/**
 * Where the package's own files are. The same code runs two ways:
 * - in the repository, as TypeScript through the loader (bin/register.cjs): the sources sit at the repository root;
 * - installed from the tarball, as JavaScript under `dist/` (tsconfig.build.json), with no TypeScript loader.
 * Everything that names a file of the package (the workflow entry, a process entry to spawn) goes through here,
 * so it resolves in both. A user's data (dev server databases, keys, logs) goes in the user's project, never into
 * an installed package.
 */
import path from 'node:path';

/** The folder holding `src/`, `workflows/`, `services/`…: the repository root, or `<package>/dist`. */
export const SOURCE_ROOT = path.resolve(__dirname, '..');

/** True when this code runs compiled (from `dist/`), false under the TypeScript loader. */
export const COMPILED = path.extname(__filename) === '.js';

/** The extension of the package's own modules as they run here. */
export const MODULE_EXT = COMPILED ? '.js' : '.ts';

/** The folder holding the package's package.json. */
export const PACKAGE_ROOT = COMPILED && path.basename(SOURCE_ROOT) === 'dist' ? path.dirname(SOURCE_ROOT) : SOURCE_ROOT;

/** True when the package is installed as a dependency (it sits inside a node_modules folder). */
export const INSTALLED = PACKAGE_ROOT.split(path.sep).includes('node_modules');

/**
 * The folder for server databases, logs and generated keys: LEDGERLOOP_DATA_DIR; else `<repo>/.data` in the
 * repository; else `.data` in the working directory (the user's project).
 */
export function dataDir(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const fromEnv = env['LEDGERLOOP_DATA_DIR'];
  if (fromEnv) return path.resolve(cwd, fromEnv);
  return INSTALLED ? path.join(cwd, '.data') : path.join(PACKAGE_ROOT, '.data');
}

/** A module of the package, `segments` from the source root without extension, as the file that runs here. */
export function packageModule(...segments: string[]): string {
  return path.join(SOURCE_ROOT, ...segments) + MODULE_EXT;
}

/** The repository's TypeScript loader; used only when the package runs from its sources. */
export const TS_LOADER = path.join(PACKAGE_ROOT, 'bin', 'register.cjs');

/**
 * The node arguments that run `entry` (a file from `packageModule`): a TypeScript file goes through the loader,
 * a compiled one runs as it is.
 */
export function nodeArgsFor(entry: string): string[] {
  return entry.endsWith('.ts') ? ['-r', TS_LOADER, entry] : [entry];
}

/** The package's own package.json (name and version), read at run time. */
export function packageJsonPath(): string {
  return path.join(PACKAGE_ROOT, 'package.json');
}
