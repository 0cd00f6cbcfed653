/**
 * `bin/register.cjs`, the loader the `ledgerloop` command, the services and the lab's workers start through: it
 * compiles TypeScript and ES-module-only packages, leaves every other `.js` file to Node, maps stack traces to the
 * TypeScript lines, and reads a file it compiled before from its disk cache without loading esbuild.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TS_LOADER } from '../../services/spawn';

const REPO = path.resolve(__dirname, '..', '..');

let dir: string;
let tmp: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-register-'));
  tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Runs `entry` (a path, or `-e` code) in a fresh Node under the loader; its cache goes under this test's TMPDIR. */
function run(args: readonly string[]) {
  const r = spawnSync(process.execPath, ['-r', TS_LOADER, ...args], {
    cwd: REPO,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, TMPDIR: tmp },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function cacheEntries(): string[] {
  const caches = fs.readdirSync(tmp).filter((d) => d.startsWith('ledgerloop-ts-'));
  return caches.flatMap((d) => fs.readdirSync(path.join(tmp, d)).filter((f) => f.endsWith('.js')));
}

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

test('a TypeScript file runs, with its types, imports, enums and class names compiled as tsx compiles them', () => {
  write('helper.ts', 'export enum Colour { Red = "red" }\nexport class Ledger { readonly size: number = 3 }\n');
  const entry = write(
    'main.ts',
    [
      "import { Colour, Ledger } from './helper';",
      'const l: Ledger = new Ledger();',
      'console.log(JSON.stringify([Colour.Red, l.size, Ledger.name, (() => 1).name]));',
    ].join('\n'),
  );
  const r = run([entry]);
  expect(r.stderr).toBe('');
  expect(JSON.parse(r.stdout)).toEqual(['red', 3, 'Ledger', '']);
});

test("a stack trace names the TypeScript file and the line of the throw, not the compiled output's", () => {
  const entry = write(
    'throws.ts',
    ['type Unused = { a: string };', '', 'function fail(): never {', "  throw new Error('here');", '}', 'fail();'].join(
      '\n',
    ),
  );
  const r = run([entry]);
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain(`${entry}:4:`);
});

test('an ES-module-only package (jose) can be required, and the CommonJS packages are left to Node', () => {
  const r = run([
    '-e',
    "const { base64url } = require('jose'); require('commander'); console.log(base64url.encode('ok'))",
  ]);
  expect(r.stderr).toBe('');
  expect(r.stdout.trim()).toBe('b2s');
  const entries = cacheEntries();
  // jose's files were compiled and cached; commander (CommonJS) was not compiled at all.
  const joseFiles = fs.readdirSync(path.join(REPO, 'node_modules', 'jose', 'dist', 'webapi', 'util'));
  expect(entries.length).toBeGreaterThan(joseFiles.length);
  const beforeCommander = entries.length;
  run(['-e', "require('commander')"]);
  expect(cacheEntries().length).toBe(beforeCommander);
});

test('a file compiled before is read from the cache (esbuild is not loaded); an edited one is compiled again', () => {
  const entry = write('cached.ts', 'const n: number = 1;\nconsole.log(n);\n');
  const esbuildLoaded = `process.on('exit', () => console.log(Object.keys(require.cache).some((f) => /[\\\\/]esbuild[\\\\/]lib[\\\\/]main\\.js$/.test(f))));`;
  const check = write('check.js', esbuildLoaded);
  const first = run(['-r', check, entry]);
  expect(first.stdout.trim().split('\n')).toEqual(['1', 'true']);
  const second = run(['-r', check, entry]);
  expect(second.stdout.trim().split('\n')).toEqual(['1', 'false']);
  fs.writeFileSync(entry, 'const n: number = 2;\nconsole.log(n);\n');
  const edited = run(['-r', check, entry]);
  expect(edited.stdout.trim().split('\n')).toEqual(['2', 'true']);
});

test('a syntax error names the file and the line, and nothing is cached for it', () => {
  const entry = write('broken.ts', 'const ok = 1;\nconst = ;\n');
  const r = run([entry]);
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain('broken.ts:2:');
  expect(cacheEntries()).toEqual([]);
});

/**
 * The cache lives in a shared temporary directory, and its entries are code this process runs: a directory another
 * user could write to (or owns) is not read, so nobody can plant compiled code for a file whose contents they know.
 */
describe("the cache directory must be this user's alone", () => {
  const entry = () => write('trusted.ts', 'const n: number = 1;\nconsole.log("real", n);\n');

  /** Plants, for every cache entry the first run wrote, code that prints "planted", then runs `file` again. */
  function plantAndRun(file: string, prepare: (cacheDir: string) => void): string {
    expect(run([file]).stdout.trim()).toBe('real 1');
    const cacheDir = path.join(
      tmp,
      fs.readdirSync(tmp).find((d) => d.startsWith('ledgerloop-ts-'))!,
    );
    for (const f of fs.readdirSync(cacheDir).filter((n) => n.endsWith('.js')))
      fs.writeFileSync(path.join(cacheDir, f), 'console.log("planted");\n');
    prepare(cacheDir);
    return run([file]).stdout.trim();
  }

  test('the check can fail: a planted entry in a private cache is what runs', () => {
    expect(plantAndRun(entry(), () => undefined)).toBe('planted');
  });

  test('a cache directory others may write to is not read', () => {
    expect(plantAndRun(entry(), (cacheDir) => fs.chmodSync(cacheDir, 0o777))).toBe('real 1');
  });

  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  (asRoot ? test : test.skip)('a cache directory another user owns is not read (needs root to chown)', () => {
    expect(plantAndRun(entry(), (cacheDir) => fs.chownSync(cacheDir, 65534, 65534))).toBe('real 1');
  });
});

test("the package's own name resolves to its sources, entry by entry, whether or not dist/ was built", () => {
  // examples/ticketing and the local-model check require `ledgerloop`, `ledgerloop/worker`, …: from a clone with no
  // build they must get the sources (the same modules everything else here loads), never a missing dist/ file.
  const entries = ['ledgerloop', 'ledgerloop/worker', 'ledgerloop/services', 'ledgerloop/testing', 'ledgerloop/codec'];
  const r = run(['-e', `console.log(JSON.stringify(${JSON.stringify(entries)}.map((e) => require.resolve(e))))`]);
  expect(r.stderr).toBe('');
  const resolved = JSON.parse(r.stdout) as string[];
  expect(resolved.map((f) => path.relative(REPO, f))).toEqual([
    path.join('host', 'index.ts'),
    path.join('host', 'worker', 'index.ts'),
    path.join('services', 'index.ts'),
    path.join('host', 'testing', 'index.ts'),
    path.join('host', 'codec', 'index.ts'),
  ]);
  // The control: another package's name is left to Node.
  const other = run(['-e', "console.log(require.resolve('zod'))"]);
  expect(other.stdout.trim()).toBe(require.resolve('zod'));
  // An entry the package does not export stays unresolvable, as Node has it.
  const hidden = run(['-e', "require.resolve('ledgerloop/host/index')"]);
  expect(hidden.status).not.toBe(0);
  expect(hidden.stderr).toMatch(/ERR_PACKAGE_PATH_NOT_EXPORTED|Cannot find module/);
});
