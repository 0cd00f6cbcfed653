/** `ledgerloop faults --explore`: bad usage exits 2 and runs nothing. */
import { Command } from 'commander';
import { registerFaultsCommand } from '../../lab/faults/cli';
import { ExploreUsageError, parseExploreFlags, runExploreCommand } from '../../lab/faults/explore';

function captureStderr(): { text: () => string; restore: () => void } {
  const written: string[] = [];
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  return { text: () => written.join(''), restore: () => spy.mockRestore() };
}

describe('the explorer flags', () => {
  test('seed, runs, minutes and the failure directory are read', () => {
    expect(
      parseExploreFlags(undefined, { explore: true, seed: '1', runs: '20', minutes: '10', saveFailures: 'out' }),
    ).toEqual({
      seed: 1,
      runs: 20,
      minutes: 10,
      saveFailures: 'out',
    });
    expect(parseExploreFlags(undefined, { seed: '4294967295' })).toEqual({ seed: 4294967295, runs: 20 });
    expect(parseExploreFlags(undefined, { seed: '1', case: '8', shrinkAttempts: '0', verbose: true })).toEqual({
      seed: 1,
      runs: 20,
      only: 8,
      shrinkAttempts: 0,
      verbose: true,
    });
    expect(parseExploreFlags(undefined, { seed: '1', minFired: '0.9' })).toEqual({ seed: 1, runs: 20, minFired: 0.9 });
  });

  test.each([
    [undefined, {}, /needs --seed/],
    [undefined, { seed: 'x' }, /--seed must be a whole number/],
    [undefined, { seed: '-1' }, /--seed/],
    [undefined, { seed: '1.5' }, /--seed/],
    [undefined, { seed: '1', runs: '0' }, /--runs/],
    [undefined, { seed: '1', minFired: '90' }, /--min-fired must be a share from 0 to 1/],
    [undefined, { seed: '1', minFired: '' }, /--min-fired/],
    [undefined, { seed: '1', minutes: '0' }, /--minutes/],
    [undefined, { seed: '1', minutes: 'soon' }, /--minutes/],
    [undefined, { seed: '1', shrinkAttempts: '-2' }, /--shrink-attempts/],
    [undefined, { seed: '1', case: '0' }, /--case/],
    ['protocols/workshop.json', { seed: '1' }, /no protocol file/],
  ])('%s %j is bad usage', (file, flags, message) => {
    expect(() => parseExploreFlags(file, flags)).toThrow(ExploreUsageError);
    expect(() => parseExploreFlags(file, flags)).toThrow(message);
  });

  test('bad usage exits 2 and says nothing was run', async () => {
    const err = captureStderr();
    try {
      await expect(runExploreCommand(undefined, { explore: true, runs: '3' })).resolves.toBe(2);
    } finally {
      err.restore();
    }
    expect(err.text()).toMatch(/needs --seed[\s\S]*Nothing was run/);
  });

  test.each([
    [['faults'], /give a protocol file, or --explore --seed S/],
    [['faults', 'protocols/workshop.json', '--seed', '3'], /--seed only apply with --explore/],
    [['faults', '--explore', '--seed', 'abc'], /--seed must be a whole number/],
  ])('`ledgerloop %s` exits 2', async (args, message) => {
    const program = new Command().exitOverride();
    registerFaultsCommand(program);
    const err = captureStderr();
    const before = process.exitCode;
    try {
      await program.parseAsync(args, { from: 'user' });
      expect(process.exitCode).toBe(2);
    } finally {
      err.restore();
      process.exitCode = before;
    }
    expect(err.text()).toMatch(message);
  });
});
