/**
 * The outbox in the project config (host/project/config.ts, host/project/outbox.ts): a declaration that names its
 * database by an environment variable only, refused with a typed error naming the field when it is wrong, and at
 * worker start when the variable is unset or holds no PostgreSQL URL. Each refusal has a positive control beside it.
 */
import path from 'node:path';
import { parseProjectConfig, ProjectConfigError, type ProjectConfig } from '../../host/project/config';
import { projectOutbox } from '../../host/project/outbox';
import { PgOutbox } from '../../src/downstream/outbox/pg-outbox';

const FILE = path.join('/app', 'ledgerloop.config.json');
const BASE = {
  tools: './tools.js',
  model: { kind: 'scripted', scenarios: './scenarios.js' },
  services: { payments: 'http://127.0.0.1:4242' },
};
const OUTBOX = { tools: ['vendor_charge'], urlEnv: 'OUTBOX_DATABASE_URL' };

function refusal(fn: () => unknown): ProjectConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProjectConfigError) return err;
    throw err;
  }
  throw new Error('expected a ProjectConfigError');
}

describe('an outbox declaration that does not validate names the field', () => {
  const cases: [string, unknown, string, RegExp][] = [
    [
      'the database URL itself instead of its variable',
      { ...OUTBOX, urlEnv: 'postgres://ledgerloop:hunter22@db/app' },
      'outbox.urlEnv',
      /environment variable/,
    ],
    ['a url field (a secret in the config)', { ...OUTBOX, url: 'postgres://db/app' }, 'outbox.url', /unknown field/],
    ['no variable at all', { tools: ['vendor_charge'] }, 'outbox.urlEnv', /./],
    ['no tool', { ...OUTBOX, tools: [] }, 'outbox.tools', /at least one tool/],
    ['a tool named twice', { ...OUTBOX, tools: ['vendor_charge', 'vendor_charge'] }, 'outbox.tools', /twice/],
    [
      'a table that is not a plain identifier',
      { ...OUTBOX, table: 'outbox; DROP TABLE x' },
      'outbox.table',
      /identifier/,
    ],
  ];
  test.each(cases)('%s', (_what, outbox, field, message) => {
    const e = refusal(() => parseProjectConfig({ ...BASE, outbox }, FILE));
    expect(e.code).toBe('Config.Project');
    expect(e.issues).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    expect(e.issues.find((i) => i.field === field)?.message).toMatch(message);
    expect(e.message).not.toContain('hunter22');
  });

  test('positive control: a declaration by variable name parses, its table defaulted by the outbox', () => {
    expect(parseProjectConfig({ ...BASE, outbox: OUTBOX }, FILE).outbox).toEqual(OUTBOX);
    expect(parseProjectConfig({ ...BASE, outbox: { ...OUTBOX, table: 'payments_outbox' } }, FILE).outbox).toEqual({
      ...OUTBOX,
      table: 'payments_outbox',
    });
    expect(parseProjectConfig(BASE, FILE).outbox).toBeUndefined();
  });
});

describe('at worker start the outbox reads its database URL from the environment, or refuses', () => {
  const config = (outbox: unknown = OUTBOX): ProjectConfig => parseProjectConfig({ ...BASE, outbox }, FILE);

  test('an unset variable refuses the start, naming the variable', () => {
    const e = refusal(() => projectOutbox(config(), {}));
    expect(e.issues).toEqual([{ field: 'outbox.urlEnv', message: expect.stringContaining('OUTBOX_DATABASE_URL') }]);
    expect(refusal(() => projectOutbox(config(), { OUTBOX_DATABASE_URL: '  ' })).issues[0]?.field).toBe(
      'outbox.urlEnv',
    );
  });

  test('a variable that holds no PostgreSQL URL refuses the start without showing its value', () => {
    const e = refusal(() => projectOutbox(config(), { OUTBOX_DATABASE_URL: 'mysql://root:hunter22@db/app' }));
    expect(e.issues[0]?.message).toMatch(/postgres:\/\//);
    expect(e.message).not.toContain('hunter22');
  });

  test('positive control: a set variable gives the wiring, the named table and tools, no connection yet', async () => {
    const wiring = projectOutbox(config({ ...OUTBOX, table: 'payments_outbox' }), {
      OUTBOX_DATABASE_URL: 'postgres://ledgerloop:pw@127.0.0.1:1/app',
    });
    expect(wiring?.outbox).toBeInstanceOf(PgOutbox);
    expect(wiring?.outbox.table).toBe('payments_outbox');
    expect(wiring?.tools).toEqual(['vendor_charge']);
    const pool = (wiring?.outbox as unknown as { pool: { end(): Promise<void> } }).pool;
    await pool.end();
  });

  test('a config without an outbox gives none and reads no variable', () => {
    expect(projectOutbox(parseProjectConfig(BASE, FILE), {})).toBeUndefined();
  });
});
