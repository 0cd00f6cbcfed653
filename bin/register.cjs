'use strict';
/**
 * Lets a plain Node process require Ledgerloop's TypeScript: `node -r ./bin/register.cjs entry.ts`, or
 * `require('./register.cjs')` first thing in a CommonJS entry. The `ledgerloop` command, the downstream services
 * and the lab's worker hosts start through it.
 *
 * It does what `node -r tsx/cjs` does for this repository, at less cost per process:
 * - a `.ts` file is compiled by esbuild to CommonJS, with a source map (stack traces name the TypeScript lines),
 *   and the result is kept in a disk cache keyed by the file's path and contents (in the system's temporary
 *   directory, read only while that directory is this user's alone: owned, not a link, writable by nobody else);
 * - a `.js` file is compiled only when its package says `"type": "module"` (jose ships ES modules only, and
 *   Node 20 cannot require one); every other `.js` file goes to Node untouched.
 * tsx also scans every `.js` file it loads for ES module syntax and walks its whole cache at each start; a process
 * that loads the Temporal client spends about a third of its start-up there (docs/performance.md, "Sixth pass").
 *
 * Compilation options follow tsx's, so the code runs the same under both: esbuild's `node` target for this Node,
 * names kept, whitespace minified.
 */
const Module = require('node:module');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');

/** Bump when the options below change, so no entry compiled under the old ones is read. */
const FORMAT = 1;
const UID = typeof process.getuid === 'function' ? process.getuid() : undefined;
const CACHE_DIR = path.join(os.tmpdir(), `ledgerloop-ts-${UID ?? 'u'}`);
/** Entries not written for this long are removed, at most once a day and only when something was compiled. */
const KEEP_MS = 7 * 24 * 3600 * 1000;
const PRUNE_EVERY_MS = 24 * 3600 * 1000;

const tsconfigRaw = {
  compilerOptions: {
    target: 'ES2022',
    useDefineForClassFields: true,
    esModuleInterop: true,
    verbatimModuleSyntax: false,
  },
};

let esbuild;
let optionsKey;
let cacheTrusted;

/**
 * Whether the cache directory may be read: its entries are code this process runs, and it lives in a shared
 * temporary directory. It must be a real directory (not a link) that this user owns and nobody else may write to;
 * otherwise nothing is read from it or written to it, and every file is compiled afresh.
 */
function cacheIsTrusted() {
  if (cacheTrusted !== undefined) return cacheTrusted;
  try {
    fs.mkdirSync(CACHE_DIR, { mode: 0o700 });
  } catch {
    // it exists already (checked below), or cannot be made (then lstat fails)
  }
  try {
    const st = fs.lstatSync(CACHE_DIR);
    cacheTrusted = st.isDirectory() && (UID === undefined || st.uid === UID) && (st.mode & 0o022) === 0;
  } catch {
    cacheTrusted = false;
  }
  return cacheTrusted;
}

function options(filename, loader) {
  return {
    loader,
    format: 'cjs',
    platform: 'node',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcefile: filename,
    sourcesContent: false,
    keepNames: true,
    minifyWhitespace: true,
    tsconfigRaw,
  };
}

function cacheKey(filename, loader, source) {
  optionsKey ??= JSON.stringify([FORMAT, process.versions.node, require('esbuild/package.json').version, tsconfigRaw]);
  return crypto
    .createHash('sha256')
    .update(optionsKey)
    .update('\0')
    .update(loader)
    .update('\0')
    .update(filename)
    .update('\0')
    .update(source)
    .digest('hex');
}

function prune() {
  const stamp = path.join(CACHE_DIR, '.pruned');
  try {
    if (Date.now() - fs.statSync(stamp).mtimeMs < PRUNE_EVERY_MS) return;
  } catch {
    // no stamp yet: prune now
  }
  try {
    fs.writeFileSync(stamp, '');
    const cutoff = Date.now() - KEEP_MS;
    for (const name of fs.readdirSync(CACHE_DIR)) {
      if (!name.endsWith('.js')) continue;
      const file = path.join(CACHE_DIR, name);
      if (fs.statSync(file).mtimeMs < cutoff) fs.rmSync(file, { force: true });
    }
  } catch {
    // the cache is an optimization: a failure to tidy it is not a failure to run
  }
}

function compile(filename, loader) {
  const source = fs.readFileSync(filename, 'utf8');
  // No key is worth hashing for a cache that is not read.
  const cached = cacheIsTrusted() ? path.join(CACHE_DIR, `${cacheKey(filename, loader, source)}.js`) : undefined;
  if (cached !== undefined) {
    try {
      return fs.readFileSync(cached, 'utf8');
    } catch {
      // not compiled yet
    }
  }
  esbuild ??= require('esbuild');
  const { code } = esbuild.transformSync(source, options(filename, loader));
  if (cached === undefined) return code;
  try {
    const partial = `${cached}.${process.pid}`;
    fs.writeFileSync(partial, code, { mode: 0o600 });
    fs.renameSync(partial, cached);
    prune();
  } catch {
    // a read-only or full disk: compile again next time
  }
  return code;
}

const packageTypes = new Map();

/** The `type` of the package a directory belongs to (the nearest package.json), memoized per directory. */
function packageType(dir) {
  let type = packageTypes.get(dir);
  if (type !== undefined) return type;
  try {
    type = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).type ?? 'commonjs';
  } catch {
    const parent = path.dirname(dir);
    type = parent === dir ? 'commonjs' : packageType(parent);
  }
  packageTypes.set(dir, type);
  return type;
}

const PACKAGE_ROOT = path.join(__dirname, '..');
let ownEntries;

/**
 * The package's own entries as source files: each `exports` target (`./dist/host/worker/index.js`) named by its
 * TypeScript source (`host/worker/index.ts`), where that source exists. This loader runs only from the sources, so
 * a `require('ledgerloop/worker')` there (examples/ticketing, the local-model check) loads the same modules as
 * everything else, with or without a build, as jest's moduleNameMapper has it.
 */
function ownSourceEntries() {
  if (ownEntries !== undefined) return ownEntries;
  ownEntries = new Map();
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8'));
    for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
      const file = typeof target === 'string' ? target : target?.default;
      if (typeof file !== 'string' || !/^\.\/dist\/.*\.js$/.test(file)) continue;
      const source = path.join(PACKAGE_ROOT, file.slice('./dist/'.length).replace(/\.js$/, '.ts'));
      if (fs.existsSync(source)) ownEntries.set(pkg.name + subpath.slice(1), source);
    }
  } catch {
    // no readable package.json: Node resolves the name as it would
  }
  return ownEntries;
}

if (!Module._extensions['.ts']) {
  const resolve = Module._resolveFilename;
  Module._resolveFilename = function (request, ...rest) {
    return ownSourceEntries().get(request) ?? resolve.call(this, request, ...rest);
  };
  Module._extensions['.ts'] = (module, filename) => module._compile(compile(filename, 'ts'), filename);
  const plainJs = Module._extensions['.js'];
  Module._extensions['.js'] = (module, filename) =>
    packageType(path.dirname(filename)) === 'module'
      ? module._compile(compile(filename, 'js'), filename)
      : plainJs(module, filename);
  process.setSourceMapsEnabled(true);
}
