/**
 * The run commands as commander sees them, with stdout, stderr and exit captured: missing or malformed flags and
 * arguments end in one line on stderr and exit code 2, --help in exit 0; nothing here reaches a server.
 */
import { Command } from 'commander';
import { registerRunCommands, type CommandIO } from '../../cli/commands';

class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

interface Run {
  readonly out: string;
  readonly err: string;
  readonly code: number | undefined;
}

async function cli(...args: string[]): Promise<Run> {
  let out = '';
  let err = '';
  let code: number | undefined;
  const io: CommandIO = {
    out: (s) => {
      out += s;
    },
    err: { write: (s: string) => (err += s), isTTY: false },
    exit: (c) => {
      throw new Exit(c);
    },
    setExitCode: (c) => {
      code = c;
    },
  };
  // The real program shows help after errors; the run commands must not (one line, not a page).
  const program = registerRunCommands(new Command('ledgerloop').showHelpAfterError(), io);
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (e) {
    if (!(e instanceof Exit)) throw e;
    code = e.code;
  }
  return { out, err, code };
}

const oneLine = (r: Run): void => expect(r.err.trimEnd().split('\n')).toHaveLength(1);

describe('bad input is one line and exit code 2', () => {
  test.each([
    [
      ['approve', 'wf-1', 'lc_1'],
      /^ledgerloop approve: this command needs your identity token: --token <jws\|@file> or LEDGERLOOP_ACTOR_TOKEN/,
    ],
    [
      ['deny', 'wf-1', 'lc_1', '--as', 'manager:carol'],
      /^ledgerloop deny: required option '--reason <text>' not specified/,
    ],
    [
      ['approve', 'wf-1', 'lc_1', '--as', 'carol'],
      /^ledgerloop approve: option '--as <kind:name>' argument 'carol' is invalid\. invalid principal/,
    ],
    [
      ['approve', 'wf-1', 'lc_1', '--as', 'manager:carol', '--ttl', 'forever'],
      /--ttl <duration>' argument 'forever' is invalid/,
    ],
    [
      ['resolve', 'wf-1', 'lc_1', '--outcome', 'maybe', '--as', 'ops:bob', '--reason', 'r'],
      /--outcome <SUCCEEDED\|FAILED>' argument 'maybe' is invalid\. must be SUCCEEDED or FAILED/,
    ],
    [
      ['resolve', 'wf-1', 'lc_1', '--outcome', 'FAILED', '--as', 'ops:bob'],
      /required option '--reason <text>' not specified/,
    ],
    [['show'], /^ledgerloop show: missing required argument 'workflowId'/],
    [['show', 'wf-1', '--bogus'], /^ledgerloop show: unknown option '--bogus'/],
    [['list', '--limit', 'lots'], /^ledgerloop list: option '--limit <n>' argument 'lots' is invalid/],
    [['list', '--strategy', 'yolo'], /--strategy <name>' argument 'yolo' is invalid/],
    [['show', 'wf-1', '--timeout', '5'], /--timeout <duration>' argument '5' is invalid/],
  ])('%j', async (args, message) => {
    const r = await cli(...args);
    expect(r.code).toBe(2);
    oneLine(r);
    expect(r.err.trimEnd()).toMatch(message);
  });

  test('validation in the action (before any connection) exits 2 as well', async () => {
    const noPlanner = await cli('start');
    expect(noPlanner).toMatchObject({
      code: 2,
      err: 'ledgerloop start: one of --scenario <name>, --openai or --input <file> (with a planner) is required\n',
    });
    const badAddress = await cli('show', 'wf-1', '--address', 'nohost');
    expect(badAddress).toMatchObject({
      code: 2,
      err: 'ledgerloop show: --address: expected host:port, got "nohost"\n',
    });
    const badFilter = await cli('list', '--tenant', 'acme', '--status', "x'y", '--query');
    expect(badFilter.code).toBe(2);
    oneLine(badFilter);
    const noFixture = await cli('replay', 'no/such/folder');
    expect(noFixture).toMatchObject({ code: 2, err: 'ledgerloop replay: no such file or folder: no/such/folder\n' });
  });
});

describe('help and offline output', () => {
  test('--help exits 0 and cancel documents what cancellation proves', async () => {
    const r = await cli('cancel', '--help');
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: ledgerloop cancel [options] <workflowId>');
    expect(r.out).toContain('It proves only that we asked and stopped waiting');
  });

  test('list --query prints the visibility query without connecting', async () => {
    const r = await cli('list', '--principal', 'user:alice', '--unknown', '--query');
    expect(r).toMatchObject({
      code: 0,
      out: "WorkflowType = 'agentRun' AND LedgerloopPrincipal = 'user:alice' AND LedgerloopUnknownCalls > 0\n",
    });
  });

  test('every server command has --address and --namespace with environment defaults', async () => {
    for (const name of ['start', 'list', 'show', 'export', 'approve', 'deny', 'resolve', 'audit', 'cancel']) {
      const r = await cli(name, '--help');
      expect(r.out).toContain('--address <host:port>');
      expect(r.out).toContain('--namespace <ns>');
    }
  });
});
