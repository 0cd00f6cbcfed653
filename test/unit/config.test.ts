/** One validated configuration (src/config.ts): errors name the variable, secrets stay out, the docs list them all. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { TS_LOADER } from '../../services/spawn';
import { CONFIG_VARIABLES, ConfigError, configValue, readConfig } from '../../src/config';

const ROOT = path.resolve(__dirname, '../..');

test('a wrong value names its variable and what it must be', () => {
  expect(() => readConfig({ LEDGERLOOP_MAX_CACHED_WORKFLOWS: 'lots' })).toThrow(
    /LEDGERLOOP_MAX_CACHED_WORKFLOWS must be a whole number from 0 to 1000000 \(got "lots"\)/,
  );
  expect(() => configValue('LEDGERLOOP_TRACING', { LEDGERLOOP_TRACING: 'jaeger' })).toThrow(
    /LEDGERLOOP_TRACING must be off, console or otlp/,
  );
});

test('every wrong variable is named at once, with the code Config.Invalid', () => {
  let caught: unknown;
  try {
    readConfig({
      LEDGERLOOP_STICKY_TIMEOUT_MS: '-5',
      LEDGERLOOP_SERVICES: '{"wallet": "not a url"}',
      LEDGERLOOP_CODEC_STRICT: 'maybe',
      LEDGERLOOP_TASK_QUEUE: 'fine',
    });
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const error = caught as ConfigError;
  expect(error.code).toBe('Config.Invalid');
  expect(error.problems.map((p) => p.variable).sort()).toEqual([
    'LEDGERLOOP_CODEC_STRICT',
    'LEDGERLOOP_SERVICES',
    'LEDGERLOOP_STICKY_TIMEOUT_MS',
  ]);
});

test("a secret's value is never repeated in the message", () => {
  const secret = 'sk-this-must-not-leak-0123456789';
  expect(() => readConfig({ LEDGERLOOP_CODEC_KEYS: secret, LEDGERLOOP_ADMIN_PORT: 'x' })).toThrow(ConfigError);
  // A wrong secret: the message says it is hidden and does not contain it.
  const oddSchema = CONFIG_VARIABLES.OPENAI_API_KEY.schema;
  expect(oddSchema.safeParse(secret).success).toBe(true);
  try {
    readConfig({ LEDGERLOOP_TRANSCRIPT_URL: secret, LEDGERLOOP_STICKY_TIMEOUT_MS: secret });
  } catch (err) {
    expect((err as Error).message).toContain('LEDGERLOOP_STICKY_TIMEOUT_MS');
  }
  const hidden = new ConfigError([{ variable: 'LEDGERLOOP_ADMIN_TOKEN', expected: 'x' }], {
    LEDGERLOOP_ADMIN_TOKEN: secret,
  });
  expect(hidden.message).not.toContain(secret);
  expect(hidden.message).toContain('is a secret and is not shown');
  const plain = new ConfigError([{ variable: 'LEDGERLOOP_TASK_QUEUE', expected: 'x' }], {
    LEDGERLOOP_TASK_QUEUE: secret,
  });
  expect(plain.message).toContain(secret); // the check above can fail: a plain value is shown
});

test('values are typed, and empty means unset', () => {
  const config = readConfig({
    LEDGERLOOP_SERVICES: '{"wallet":"http://127.0.0.1:4100"}',
    LEDGERLOOP_MAX_CONCURRENT_ACTIVITIES: '8',
    LEDGERLOOP_CODEC_STRICT: 'Yes',
    LEDGERLOOP_TRACING: 'none',
    LEDGERLOOP_WORKFLOW_BUNDLE: '',
  });
  expect(config.LEDGERLOOP_SERVICES).toEqual({ wallet: 'http://127.0.0.1:4100' });
  expect(config.LEDGERLOOP_MAX_CONCURRENT_ACTIVITIES).toBe(8);
  expect(config.LEDGERLOOP_CODEC_STRICT).toBe(true);
  expect(config.LEDGERLOOP_TRACING).toBe('off');
  expect(config.LEDGERLOOP_WORKFLOW_BUNDLE).toBeUndefined();
  expect(configValue('LEDGERLOOP_TASK_QUEUE', {})).toBeUndefined();
});

test('the unsafe switch is on only with exactly 1', () => {
  for (const name of ['LEDGERLOOP_SCRIPTED_MODEL'] as const) {
    expect(configValue(name, { [name]: '1' })).toBe(true);
    expect(configValue(name, { [name]: 'true' })).toBe(false);
    expect(configValue(name, { [name]: '0' })).toBe(false);
  }
});

test('docs/operations.md lists every variable the schema knows, and no LEDGERLOOP_ variable it does not', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
  const section = doc.slice(
    doc.indexOf('## Environment at a glance'),
    doc.indexOf('\n## ', doc.indexOf('## Environment at a glance') + 5),
  );
  const listed = new Set(
    [...section.matchAll(/^\| ([^|]+)\|/gm)].flatMap((m) =>
      [...(m[1] ?? '').matchAll(/`([A-Z_]+)`/g)].map((n) => n[1]),
    ),
  );
  const known = Object.keys(CONFIG_VARIABLES);
  expect(known.filter((name) => !listed.has(name))).toEqual([]);
  expect([...listed].filter((name) => name?.startsWith('LEDGERLOOP_') && !known.includes(name))).toEqual([]);
});

test('a worker process with a wrong variable refuses to start with one line naming it, before it connects', () => {
  const out = spawnSync(process.execPath, ['-r', TS_LOADER, path.join(ROOT, 'host/worker/main.ts')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      TEMPORAL_ADDRESS: '127.0.0.1:1', // nothing listens: a worker that got as far as connecting would say so
      LEDGERLOOP_SERVICES: '{"wallet":"http://127.0.0.1:4100"}',
      LEDGERLOOP_MAX_CACHED_WORKFLOWS: 'lots',
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(out.status).toBe(2);
  const lines = out.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^ledgerloop worker: invalid configuration: LEDGERLOOP_MAX_CACHED_WORKFLOWS must be/);
});
