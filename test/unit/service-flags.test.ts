/** The flags every service process takes: what they parse to, and what they refuse before anything starts. */
import { FlagError, FlagRefusal } from '../../src/flags';
import { parseServiceFlags } from '../../services/service-main';

const TOKEN = 't'.repeat(40);

test('--db is required; --port, --host and --retention-ms are optional', () => {
  expect(parseServiceFlags(['--db', 'w.db'])).toEqual({
    dbPath: 'w.db',
    port: 0,
    extra: new Map(),
    insecureDev: false,
  });
  expect(parseServiceFlags(['--db=w.db', '--port', '4100', '--host', '0.0.0.0', '--retention-ms=500'])).toEqual({
    dbPath: 'w.db',
    port: 4100,
    host: '0.0.0.0',
    retentionMs: 500,
    extra: new Map(),
    insecureDev: false,
  });
  expect(parseServiceFlags(['--db', 'w.db', '--host', '::'])).toMatchObject({ host: '::' });
});

test.each([
  [['--port', '1'], /--db PATH is required/],
  [['--db', 'w.db', '--host', 'wallet; rm -rf /'], /--host must be an IP address/],
  [['--db', 'w.db', '--port', '70000'], /at most 65535/],
  [['--db', 'w.db', '--verbose', '1'], /unknown argument --verbose/],
  [['--db', 'w.db', '--host'], /--host needs a value/],
])('%j is refused', (argv, message) => {
  expect(() => parseServiceFlags(argv)).toThrow(message);
});

test.each([
  [['--db', 'w.db', '--verbose', '1'], FlagRefusal.Unknown],
  [['--db', 'w.db', '--host'], FlagRefusal.MissingValue],
  [['--db', 'w.db', '--lab=1'], FlagRefusal.UnexpectedValue],
  [['--db', 'w.db', 'stray'], FlagRefusal.Positional],
  [['--db', '--insecure-dev'], FlagRefusal.Invalid],
  [['--db', 'w.db', '--port', '-1'], FlagRefusal.Invalid],
])('%j is a FlagError %s', (argv, code) => {
  expect(() => parseServiceFlags(argv)).toThrow(FlagError);
  expect(() => parseServiceFlags(argv)).toThrow(expect.objectContaining({ code }));
});

test('the control: a well-formed command line with every flag parses', () => {
  const env = { LEDGERLOOP_ADMIN_TOKEN: TOKEN };
  const argv = ['--db', 'w.db', '--port=1', '--host', '::1', '--retention-ms', '9', '--admin-port', '2', '--lab'];
  expect(parseServiceFlags([...argv, '--insecure-dev', '--target', 't'], ['--target'], env)).toEqual({
    dbPath: 'w.db',
    port: 1,
    host: '::1',
    retentionMs: 9,
    extra: new Map([['--target', 't']]),
    insecureDev: true,
    admin: { port: 2, token: TOKEN, lab: true },
  });
});

test('service-specific flags are kept apart', () => {
  expect(parseServiceFlags(['--db', 'o.db', '--target', 'http://x'], ['--target']).extra.get('--target')).toBe(
    'http://x',
  );
});

test('the admin listener is off unless --admin-port (or LEDGERLOOP_ADMIN_PORT) enables it; --lab only with it', () => {
  expect(parseServiceFlags(['--db', 'w.db'], [], {}).admin).toBeUndefined();
  expect(
    parseServiceFlags(['--db', 'w.db', '--admin-port', '0', '--lab'], [], { LEDGERLOOP_ADMIN_TOKEN: TOKEN }).admin,
  ).toEqual({
    port: 0,
    token: TOKEN,
    lab: true,
  });
  const env = { LEDGERLOOP_ADMIN_PORT: '4199', LEDGERLOOP_ADMIN_TOKEN: TOKEN };
  expect(parseServiceFlags(['--db', 'w.db'], [], env).admin).toEqual({ port: 4199, token: TOKEN, lab: false });
  expect(parseServiceFlags(['--db', 'w.db', '--insecure-dev'], [], {}).insecureDev).toBe(true);
});

test.each([
  [['--db', 'w.db', '--admin-port', '0'], {}, /Service\.AdminTokenMissing/],
  [['--db', 'w.db', '--admin-port', '0'], { LEDGERLOOP_ADMIN_TOKEN: 'short' }, /Service\.AdminTokenMissing/],
  [['--db', 'w.db', '--lab'], { LEDGERLOOP_ADMIN_TOKEN: TOKEN }, /Service\.LabWithoutAdmin/],
])('%j with %j is refused', (argv, env, message) => {
  expect(() => parseServiceFlags(argv, [], env)).toThrow(message);
});
