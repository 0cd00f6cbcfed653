/**
 * `ledgerloop init`'s writer (host/project/scaffold.ts): the template lands whole, with its keys and a package.json
 * that names the project and its dependencies; a taken folder or a bad name is refused before anything is written.
 * The scaffold itself (install, tsc, start, tests, fault protocol) runs from the tarball in scripts/check-package.sh.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ledgerloopSourceSpec } from '../../host/project/install-source';
import { templateFlag } from '../../cli/commands/init';
import { CliUsageError } from '../../cli/errors';
import {
  scaffoldProject,
  ScaffoldError,
  TEMPLATE_DIR,
  TEMPLATES,
  type TemplateName,
} from '../../host/project/scaffold';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-init-'));

interface WrittenPackage {
  readonly name: string;
  readonly dependencies: Record<string, string>;
  readonly scripts: Record<string, string>;
}
/** The package.json init wrote into `dir`. */
const readPackage = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as WrittenPackage;

test('a new folder gets the whole template, its dev keys (secrets 0600) and a package.json naming it', async () => {
  const dir = path.join(tmp(), 'my-app');
  const made = await scaffoldProject({ dir, ledgerloopSpec: './ledgerloop-1.0.0.tgz' });
  expect(made.name).toBe('my-app');
  for (const f of [
    'ledgerloop.config.cjs',
    'policy.json',
    'protocol.json',
    'src/booking.tools.js',
    'test/booking.test.js',
  ])
    expect(made.files).toContain(f);
  // npm pack drops .gitignore: the template ships it as `gitignore`, and init restores the name.
  expect(existsSync(path.join(dir, '.gitignore'))).toBe(true);
  expect(existsSync(path.join(dir, 'gitignore'))).toBe(false);
  const pkg = readPackage(dir);
  expect(pkg.name).toBe('my-app');
  expect(pkg.dependencies['ledgerloop']).toBe(`file:${path.resolve('./ledgerloop-1.0.0.tgz')}`);
  expect(pkg.dependencies['zod']).toEqual(expect.any(String));
  expect(Object.keys(pkg.scripts)).toEqual(expect.arrayContaining(['start', 'test', 'faults', 'build']));
  expect(statSync(path.join(dir, '.ledgerloop', 'keys', 'signing-key.json')).mode & 0o777).toBe(0o600);
  expect(statSync(path.join(dir, '.ledgerloop', 'keys', 'jwks.json')).mode & 0o777).toBe(0o644);
  expect(made.keys.every((k) => k.exists)).toBe(true);
});

test('a version range is kept as it is; without one, run from this clone, the project depends on the clone', async () => {
  const ranged = await scaffoldProject({ dir: path.join(tmp(), 'a'), ledgerloopSpec: '^1.0.0' });
  const plain = await scaffoldProject({ dir: path.join(tmp(), 'b') });
  const dep = (dir: string) =>
    (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> })
      .dependencies['ledgerloop'];
  expect(dep(ranged.dir)).toBe('^1.0.0');
  // Jest runs the sources of this repository: a folder outside any node_modules.
  expect(dep(plain.dir)).toBe(`file:${path.resolve(TEMPLATE_DIR, '..', '..')}`);
  expect(plain.ledgerloop).toBe(dep(plain.dir));
});

/** A package folder as npm leaves it: `<prefix>/node_modules/ledgerloop`, and the hidden lockfile's entry for it. */
function installedAt(entry: Record<string, unknown> | undefined): string {
  const prefix = tmp();
  const root = path.join(prefix, 'node_modules', 'ledgerloop');
  mkdirSync(root, { recursive: true });
  if (entry !== undefined)
    writeFileSync(
      path.join(prefix, 'node_modules', '.package-lock.json'),
      JSON.stringify({ name: 'x', lockfileVersion: 3, packages: { 'node_modules/ledgerloop': entry } }),
    );
  return root;
}

describe('init writes the source it runs from', () => {
  test('run through `npx --package ./ledgerloop-0.1.0.tgz`, it writes that tarball, not a version the registry lacks', () => {
    // What npx 11 records in its cache folder for a tarball: a path relative to that folder.
    const root = installedAt({
      version: '0.1.0',
      resolved: 'file:../../x/ledgerloop-0.1.0.tgz',
      integrity: 'sha512-x',
    });
    const prefix = path.dirname(path.dirname(root));
    expect(ledgerloopSourceSpec(root, '0.1.0')).toBe(`file:${path.resolve(prefix, '../../x/ledgerloop-0.1.0.tgz')}`);
  });

  test('installed from the registry, it writes the version range', () => {
    const root = installedAt({
      version: '0.1.0',
      resolved: 'https://registry.example/ledgerloop/-/ledgerloop-0.1.0.tgz',
    });
    expect(ledgerloopSourceSpec(root, '0.1.0')).toBe('^0.1.0');
  });

  test('a folder npm linked, or one outside node_modules, is written as that folder', () => {
    const root = installedAt({ resolved: '../../work/ledgerloop', link: true });
    const prefix = path.dirname(path.dirname(root));
    expect(ledgerloopSourceSpec(root, '0.1.0')).toBe(`file:${path.resolve(prefix, '../../work/ledgerloop')}`);
    expect(ledgerloopSourceSpec('/src/ledgerloop', '0.1.0')).toBe('file:/src/ledgerloop');
  });

  test('a tarball URL that is not a registry’s is kept; no lockfile falls back to the version', () => {
    const url = 'https://example.test/builds/ledgerloop-main.tgz';
    expect(ledgerloopSourceSpec(installedAt({ resolved: url }), '0.1.0')).toBe(url);
    expect(ledgerloopSourceSpec(installedAt(undefined), '0.1.0')).toBe('^0.1.0');
  });
});

test('a folder that holds anything is refused, and nothing in it changes; an empty one is used', async () => {
  const dir = path.join(tmp(), 'taken');
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'notes.txt'), 'mine');
  await expect(scaffoldProject({ dir })).rejects.toThrow(ScaffoldError);
  expect(readdirSync(dir)).toEqual(['notes.txt']);
  // The control: the same call on an empty folder writes the project.
  const empty = path.join(tmp(), 'empty');
  mkdirSync(empty);
  await expect(scaffoldProject({ dir: empty })).resolves.toMatchObject({ name: 'empty' });
});

test('a name npm would refuse is refused before anything is written', async () => {
  const parent = tmp();
  await expect(scaffoldProject({ dir: path.join(parent, 'x'), name: 'My App!' })).rejects.toThrow(
    /not an npm package name/,
  );
  expect(readdirSync(parent)).toEqual([]);
  await expect(scaffoldProject({ dir: path.join(parent, 'y'), name: 'my-app.2' })).resolves.toMatchObject({
    name: 'my-app.2',
  });
});

describe('--template downstreams', () => {
  /** The package's own dependency ranges: the project gets the very ones this ledgerloop was tested with. */
  const own = JSON.parse(readFileSync(path.join(TEMPLATE_DIR, '..', '..', 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };

  test('the downstreams template lands whole, with pg and hono as the project’s own deps at ledgerloop’s ranges', async () => {
    const dir = path.join(tmp(), 'shop');
    const made = await scaffoldProject({ dir, ledgerloopSpec: '^1.0.0', template: 'downstreams' });
    expect(made.template).toBe('downstreams');
    for (const f of [
      'ledgerloop.config.cjs',
      'protocol.json',
      'scripts/stack.js',
      'src/orders-service.js',
      'src/payments.tools.js',
      'src/functions.js',
      'test/tools.test.js',
    ])
      expect(made.files).toContain(f);
    // None of the booking template's files.
    expect(made.files).not.toContain('src/booking.tools.js');
    expect(existsSync(path.join(dir, '.gitignore'))).toBe(true);
    const pkg = readPackage(dir);
    expect(pkg.name).toBe('shop');
    expect(pkg.dependencies['ledgerloop']).toBe('^1.0.0');
    for (const name of ['pg', 'hono', '@hono/node-server']) {
      expect(own.dependencies[name]).toEqual(expect.any(String));
      expect(pkg.dependencies[name]).toBe(own.dependencies[name]);
    }
    expect(made.keys.every((k) => k.exists)).toBe(true);
  });

  test('without --template the project is the booking one, which needs no PostgreSQL', async () => {
    const made = await scaffoldProject({ dir: path.join(tmp(), 'plain'), ledgerloopSpec: '^1.0.0' });
    expect(made.template).toBe('booking');
    expect(made.files).toContain('src/booking.tools.js');
    expect(readPackage(made.dir).dependencies['pg']).toBeUndefined();
  });

  test('an unknown --template is a usage error naming the templates; a known one is taken', () => {
    let caught: unknown;
    try {
      templateFlag('shopping');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CliUsageError);
    expect((caught as Error).message).toBe(`--template must be one of: ${Object.keys(TEMPLATES).join(', ')}`);
    // Inherited names are not templates.
    expect(() => templateFlag('constructor')).toThrow(CliUsageError);
    expect(templateFlag('downstreams')).toBe('downstreams');
  });

  test('an unknown template given to scaffoldProject is refused before anything is written', async () => {
    const parent = tmp();
    await expect(
      scaffoldProject({ dir: path.join(parent, 'x'), template: 'shopping' as TemplateName }),
    ).rejects.toThrow(new ScaffoldError('no template "shopping": booking, downstreams'));
    expect(readdirSync(parent)).toEqual([]);
  });
});
