/**
 * The project config (host/project/config.ts): which file is found, how each kind loads, the paths it resolves, and
 * the typed error naming the file and the field for each kind of mistake.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TS_LOADER } from '../../services/spawn';
import {
  findConfigFile,
  loadProjectConfig,
  parseProjectConfig,
  ProjectConfigError,
  readProjectConfig,
  typeScriptLoaderActive,
} from '../../host/project/config';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'll-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const VALID = {
  tools: './src/tools.js',
  model: { kind: 'scripted', scenarios: './src/scenarios.js' },
  policy: './policy.json',
  services: { booking: { url: 'http://127.0.0.1:4300', main: './src/service.js' }, mail: 'http://127.0.0.1:4400' },
  taskQueue: 'booking',
  connection: { profile: 'staging', configFile: './temporal.toml' },
};

function write(name: string, content: string): string {
  const file = path.join(dir, name);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

/** The error `fn` throws (it must throw a ProjectConfigError). */
async function configError(fn: () => unknown): Promise<ProjectConfigError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ProjectConfigError) return err;
    throw err;
  }
  throw new Error('expected a ProjectConfigError');
}

test('a JSON config resolves every path against its own folder, and the key files under keys.dir', async () => {
  const file = write('ledgerloop.config.json', JSON.stringify({ ...VALID, keys: { dir: 'secrets' } }));
  const c = await readProjectConfig(file);
  expect(c.file).toBe(file);
  expect(c.tools).toBe(path.join(dir, 'src/tools.js'));
  expect(c.models).toEqual([{ kind: 'scripted', scenarios: path.join(dir, 'src/scenarios.js') }]);
  expect(c.policy).toEqual({ file: path.join(dir, 'policy.json') });
  expect(c.services).toEqual({
    booking: { url: 'http://127.0.0.1:4300', main: path.join(dir, 'src/service.js') },
    mail: { url: 'http://127.0.0.1:4400' },
  });
  expect(c.taskQueue).toBe('booking');
  expect(c.keys.signingKey).toBe(path.join(dir, 'secrets', 'signing-key.json'));
  expect(c.keys.codecKeys).toBe(path.join(dir, 'secrets', 'codec-keys'));
  expect(c.connection).toEqual({ profile: 'staging', configFile: path.join(dir, 'temporal.toml') });
});

test('without keys.dir the keys live in .ledgerloop/keys; one key file may be named on its own', () => {
  const c = parseProjectConfig(
    { ...VALID, keys: { identityIssuers: '/etc/idp/issuers.json' } },
    path.join(dir, 'x.json'),
  );
  expect(c.keys.dir).toBe(path.join(dir, '.ledgerloop', 'keys'));
  expect(c.keys.jwks).toBe(path.join(dir, '.ledgerloop', 'keys', 'jwks.json'));
  expect(c.keys.identityIssuers).toBe('/etc/idp/issuers.json');
});

test('a CommonJS config loads (module.exports), and an inline policy document is checked and kept', async () => {
  const file = write(
    'ledgerloop.config.cjs',
    `module.exports = ${JSON.stringify({ ...VALID, policy: { version: 'p/1', rules: [{ action: 'booking.book' }] } })};`,
  );
  const c = await readProjectConfig(file);
  expect(c.policy).toMatchObject({ document: { version: 'p/1', rules: [{ action: 'booking.book' }] } });
});

test('the nearest config from the working directory up is found; none means the built-in demo', async () => {
  const file = write('ledgerloop.config.json', JSON.stringify(VALID));
  const deep = path.join(dir, 'a', 'b');
  mkdirSync(deep, { recursive: true });
  expect(findConfigFile(deep)).toBe(file);
  expect((await loadProjectConfig({ cwd: deep }))?.file).toBe(file);
  rmSync(file);
  expect(await loadProjectConfig({ cwd: deep })).toBeUndefined();
});

test('--config names a file that must exist', async () => {
  const e = await configError(() => loadProjectConfig({ configPath: 'nope.mjs', cwd: dir }));
  expect(e.file).toBe(path.join(dir, 'nope.mjs'));
  expect(e.message).toBe(`${path.join(dir, 'nope.mjs')}: no such file`);
});

describe('a config that does not validate names the file and each wrong field', () => {
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ['a missing tools module', { ...VALID, tools: undefined }, 'tools', /./],
    ['an unknown field', { ...VALID, taskQeue: 'x' }, 'taskQeue', /unknown field/],
    ['a model of no known kind', { ...VALID, model: { kind: 'magic' } }, 'model', /scripted|openai/],
    ['a scripted model without scenarios', { ...VALID, model: { kind: 'scripted' } }, 'model.scenarios', /./],
    ['a service that is not a URL', { ...VALID, services: { booking: 'localhost:4300' } }, 'services.booking', /URL/],
    [
      'an upper-case service name',
      { ...VALID, services: { Booking: 'http://127.0.0.1:1' } },
      'services.Booking',
      /lower case/,
    ],
    [
      'an API key instead of its variable',
      { ...VALID, model: { kind: 'openai', apiKeyEnv: 'sk-abc' } },
      'model.apiKeyEnv',
      /environment variable/,
    ],
    ['a policy rule without its action', { ...VALID, policy: { version: 'p', rules: [{}] } }, 'policy', /./],
    [
      'a connection address without a port',
      { ...VALID, connection: { address: 'temporal.example.com' } },
      'connection.address',
      /host:port/,
    ],
  ];
  test.each(cases)('%s', (_what, raw, field, message) => {
    const file = path.join(dir, 'ledgerloop.config.json');
    let error: unknown;
    try {
      parseProjectConfig(raw, file);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ProjectConfigError);
    const e = error as ProjectConfigError;
    expect(e.file).toBe(file);
    expect(e.issues.some((i) => i.field.startsWith(field) && message.test(i.message))).toBe(true);
    expect(e.message.startsWith(file)).toBe(true);
  });

  test('positive control: the same config with those fields right validates', () => {
    expect(() => parseProjectConfig(VALID, path.join(dir, 'ledgerloop.config.json'))).not.toThrow();
  });

  test('several wrong fields are all named, on one line', () => {
    const e = (() => {
      try {
        parseProjectConfig({ tools: 3, model: { kind: 'scripted', scenarios: './s.js' }, services: {} }, 'c.json');
      } catch (err) {
        return err as ProjectConfigError;
      }
      throw new Error('expected an error');
    })();
    expect(e.issues.map((i) => i.field)).toEqual(['tools']);
    const two = (() => {
      try {
        parseProjectConfig({ tools: 3, model: 4, services: {} }, 'c.json');
      } catch (err) {
        return err as ProjectConfigError;
      }
      throw new Error('expected an error');
    })();
    expect(two.issues.map((i) => i.field)).toEqual(['tools', 'model']);
    expect(two.message).not.toContain('\n');
  });
});

test('a JSON config that is not JSON, and a module that throws, are refused naming the file', async () => {
  const json = write('ledgerloop.config.json', '{ tools: ');
  expect((await configError(() => readProjectConfig(json))).message).toMatch(/ledgerloop\.config\.json: not JSON/);
  const cjs = write('ledgerloop.config.cjs', 'throw new Error("boom in config")');
  expect((await configError(() => readProjectConfig(cjs))).message).toMatch(
    /ledgerloop\.config\.cjs: cannot load: boom/,
  );
});

test('a TypeScript config without a loader is refused, saying what to do', async () => {
  // Jest compiles test files itself; Node's CommonJS loader here has no `.ts` hook, as a user's plain node would not.
  expect(typeScriptLoaderActive()).toBe(false);
  const file = write('ledgerloop.config.ts', `export default ${JSON.stringify(VALID)};`);
  const e = await configError(() => readProjectConfig(file));
  expect(e.message).toMatch(/needs a TypeScript loader.*rename it ledgerloop\.config\.mjs.*tsx/);
});

/** Loads `file` in a fresh Node process under the repository's loader (a real `import()`, which jest lacks). */
function loadInNode(file: string): { tools?: string; error?: string } {
  const script = `require(${JSON.stringify(path.resolve(__dirname, '../../host/project/config.ts'))})
    .readProjectConfig(${JSON.stringify(file)})
    .then((c) => process.stdout.write(JSON.stringify({ tools: c.tools })), (e) => process.stdout.write(JSON.stringify({ error: e.message })));`;
  return JSON.parse(execFileSync(process.execPath, ['-r', TS_LOADER, '-e', script], { encoding: 'utf8' })) as {
    tools?: string;
  };
}

test('an ES module config (.mjs, and .js in a "type": "module" package) loads with import(); .ts under a loader', () => {
  const mjs = write('a/ledgerloop.config.mjs', `export default ${JSON.stringify(VALID)};`);
  expect(loadInNode(mjs)).toEqual({ tools: path.join(dir, 'a', 'src/tools.js') });
  write('b/package.json', '{"type":"module"}');
  const js = write('b/ledgerloop.config.js', `export default ${JSON.stringify(VALID)};`);
  expect(loadInNode(js)).toEqual({ tools: path.join(dir, 'b', 'src/tools.js') });
  const ts = write(
    'c/ledgerloop.config.ts',
    `const c: Record<string, unknown> = ${JSON.stringify(VALID)};\nexport default c;`,
  );
  expect(loadInNode(ts)).toEqual({ tools: path.join(dir, 'c', 'src/tools.js') });
  // And a wrong field in an ES module is named the same way.
  const bad = write('d/ledgerloop.config.mjs', `export default ${JSON.stringify({ ...VALID, tools: '' })};`);
  expect(loadInNode(bad).error).toMatch(/ledgerloop\.config\.mjs: tools: must be a path/);
});
