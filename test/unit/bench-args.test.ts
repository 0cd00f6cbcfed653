/** The bench's command line: what each flag parses to, and the typed refusals (a FlagError naming the flag). */
import { parseBenchArgs, SECTIONS } from '../../lab/bench/args';
import { FlagError, FlagRefusal } from '../../src/flags';

test('no flags: every default section on the dev server, one host', () => {
  expect(parseBenchArgs([], {})).toEqual({
    quick: false,
    longRun: false,
    only: new Set(SECTIONS),
    dbOnDisk: false,
    target: 'dev',
    hosts: [1],
  });
});

test('the flags, each as `--flag value` or `--flag=value`', () => {
  const args = parseBenchArgs(
    ['--quick', '--long-run', '--only=latency,model', '--target', 'cluster', '--hosts=2'],
    {},
  );
  expect(args).toEqual({
    quick: true,
    longRun: true,
    only: new Set(['latency', 'model']),
    dbOnDisk: false,
    target: 'cluster',
    hosts: [2],
  });
  expect(parseBenchArgs(['--target', 'cluster'], {})).toMatchObject({
    only: new Set(['latency', 'throughput', 'quota']),
    hosts: [1, 2, 3],
  });
  expect(parseBenchArgs([], { BENCH_DB_ON_DISK: '1' }).dbOnDisk).toBe(true);
});

test.each([
  [['--quik'], FlagRefusal.Unknown, /unknown argument --quik/],
  [['--only'], FlagRefusal.MissingValue, /--only needs a value/],
  [['--quick=yes'], FlagRefusal.UnexpectedValue, /--quick takes no value/],
  [['--target', 'prod'], FlagRefusal.Invalid, /--target must be dev or cluster/],
  [['--only', 'latency,speed'], FlagRefusal.Invalid, /unknown section speed/],
  [['--hosts', '1,9'], FlagRefusal.Invalid, /--hosts takes whole numbers from 1 to 8/],
])('%j is refused (%s)', (argv, code, message) => {
  const parse = (): unknown => parseBenchArgs(argv, {});
  expect(parse).toThrow(FlagError);
  expect(parse).toThrow(message);
  expect(parse).toThrow(expect.objectContaining({ code }));
});
