/**
 * The CLI's pure parts: flag values, the run input built from a file and flags, the visibility query, and the
 * rendering helpers. Every bad value is a CliUsageError (exit code 2) whose message names the flag.
 */
import { CliUsageError, EXIT_FAILED, EXIT_USAGE, RunNotFoundError, toCliError } from '../../cli/errors';
import { buildListQuery, filterWarnings } from '../../cli/list-query';
import {
  parseDeadline,
  parseDuration,
  parseOutcome,
  parsePositiveInt,
  parsePrincipal,
  parseStrategy,
  parseTenant,
  parseVars,
} from '../../cli/parse';
import { formatElapsed, startProgress } from '../../cli/progress';
import { buildRunInput, type StartInputFlags } from '../../cli/run-input';
import { MAX_JSON_DEPTH, valueDepth } from '../../src/domain/json-depth';
import { briefly, replayLine } from '../../cli/commands/replay';
import { eventLine, renderTable } from '../../cli/format';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { LedgerEvent } from '../../src/domain/ledger-events';

const NOW = Date.parse('2030-01-01T00:00:00.000Z');
const usage = (fn: () => unknown, message: RegExp): void => {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(CliUsageError);
  expect((caught as CliUsageError).exitCode).toBe(EXIT_USAGE);
  expect((caught as Error).message).toMatch(message);
  expect((caught as Error).message).not.toContain('\n');
};

describe('flag values', () => {
  test('durations take a unit', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('60s')).toBe(60_000);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    usage(() => parseDuration('60', '--ttl'), /^--ttl: invalid duration "60"/);
    usage(() => parseDuration('0s'), /invalid duration/);
    usage(() => parseDuration('-1s'), /invalid duration/);
  });

  test('a deadline is a duration from now or a future ISO time with a zone', () => {
    expect(parseDeadline('60s', NOW)).toBe('2030-01-01T00:01:00.000Z');
    expect(parseDeadline('2030-01-01T02:00:00+01:00', NOW)).toBe('2030-01-01T01:00:00.000Z');
    usage(() => parseDeadline('2029-12-31T23:00:00Z', NOW), /in the past/);
    usage(() => parseDeadline('2030-01-01T02:00:00', NOW), /with a zone/);
  });

  test('principals are kind:name; tenants, strategies and outcomes are checked', () => {
    expect(parsePrincipal('manager:carol')).toBe('manager:carol');
    usage(() => parsePrincipal('carol', '--as'), /^--as: invalid principal "carol"/);
    usage(() => parseTenant('ac me'), /--tenant/);
    expect(parseStrategy('check_receipt')).toBe('check_receipt');
    usage(() => parseStrategy('yolo'), /one of check_receipt, same_key_replay/);
    usage(() => parseStrategy('blind_retry'), /unknown strategy "blind_retry"/); // the lab's, not the runtime's
    expect(parseOutcome('succeeded')).toBe('SUCCEEDED');
    usage(() => parseOutcome('MAYBE'), /SUCCEEDED or FAILED/);
    expect(parsePositiveInt('20', '--limit')).toBe(20);
    usage(() => parsePositiveInt('2.5', '--limit'), /--limit/);
  });

  test('--var pairs: JSON values, dotted keys nest, plain text stays text', () => {
    expect(
      parseVars(['account=acct_1', 'amount.minor=1250', 'amount.currency=EUR', 'urgent=true', 'note=hello world']),
    ).toEqual({
      account: 'acct_1',
      amount: { minor: 1250, currency: 'EUR' },
      urgent: true,
      note: 'hello world',
    });
    expect(parseVars(['amount={"minor":5,"currency":"EUR"}'])).toEqual({ amount: { minor: 5, currency: 'EUR' } });
    usage(() => parseVars(['amount={"minor":']), /^--var amount: malformed JSON value/);
    usage(() => parseVars(['novalue']), /expected key=value/);
    usage(() => parseVars(['a=1', 'a=2']), /given twice/);
    usage(() => parseVars(['a=1', 'a.b=2']), /conflicts/);
  });
});

describe('the run input of `start`', () => {
  const files: Record<string, string> = {
    'ok.json': JSON.stringify({
      principal: { id: 'user:bob', tenant: 'globex' },
      goal: 'pay the invoice',
      strategy: 'check_receipt',
      planner: { kind: 'scripted', scenario: 'wallet-debit', vars: { account: 'acct_9' } },
      budgets: { maxTurns: 3 },
      futureField: 1,
    }),
    'broken.json': '{"goal": ',
    'wrong.json': JSON.stringify({ strategy: 'yolo' }),
    'openai.json': JSON.stringify({ goal: 'summarize', planner: { kind: 'openai', model: 'gpt-x', temperature: 0 } }),
  };
  const deps = {
    nowMs: NOW,
    knownScenarios: ['wallet-debit', 'two-debits'],
    readFile: (f: string): string => {
      const text = files[f];
      if (text === undefined) throw Object.assign(new Error(`ENOENT: ${f}`), { code: 'ENOENT' });
      return text;
    },
  };
  const build = (flags: StartInputFlags) => buildRunInput(flags, deps);

  test('a scenario with vars and defaults', () => {
    const { input } = build({ scenario: 'wallet-debit', vars: ['account=acct_1'] });
    expect(input).toEqual({
      principal: { id: 'user:alice', tenant: 'acme' },
      goal: 'scripted scenario wallet-debit',
      strategy: 'same_key_replay',
      planner: { kind: 'scripted', scenario: 'wallet-debit', vars: { account: 'acct_1' } },
      deadlineAt: '2030-01-01T00:05:00.000Z',
    });
  });

  test('a --var nested deeper than MAX_JSON_DEPTH is refused before anything starts, naming the field and the limit', () => {
    const deep = `x=${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`;
    expect(() => build({ scenario: 'wallet-debit', vars: [deep] })).toThrow(CliUsageError);
    expect(() => build({ scenario: 'wallet-debit', vars: [deep] })).toThrow(
      `--var/--input: the run input nests deeper than ${MAX_JSON_DEPTH} levels (under planner.vars.x[0]); nothing was started`,
    );
    // a dotted key nests too
    const dotted = `${Array.from({ length: MAX_JSON_DEPTH }, (_, i) => `k${i}`).join('.')}=1`;
    expect(() => build({ scenario: 'wallet-debit', vars: [dotted] })).toThrow(
      /nests deeper than 64 levels \(under planner\.vars\.k0\.k1\)/,
    );
    // the positive control: one level less fits (planner and vars take two of the 64)
    const fits = `x=${'['.repeat(MAX_JSON_DEPTH - 3)}${']'.repeat(MAX_JSON_DEPTH - 3)}`;
    expect(valueDepth(build({ scenario: 'wallet-debit', vars: [fits] }).input)).toBe(MAX_JSON_DEPTH);
  });

  test('a file, with flags winning and unknown fields passed through with a note', () => {
    const { input, warnings } = build({ input: 'ok.json', vars: ['amount.minor=5'], tenant: 'acme', deadline: '30s' });
    expect(input).toMatchObject({
      principal: { id: 'user:bob', tenant: 'acme' },
      strategy: 'check_receipt',
      planner: { kind: 'scripted', scenario: 'wallet-debit', vars: { account: 'acct_9', amount: { minor: 5 } } },
      budgets: { maxTurns: 3 },
      futureField: 1,
      deadlineAt: '2030-01-01T00:00:30.000Z',
    });
    expect(warnings).toEqual([expect.stringContaining('futureField')]);
  });

  test('an openai run needs a goal; --model overrides the file', () => {
    expect(build({ input: 'openai.json', model: 'gpt-y' }).input.planner).toEqual({
      kind: 'openai',
      model: 'gpt-y',
      temperature: 0,
    });
    expect(build({ openai: true, goal: 'g' }).input.planner).toEqual({ kind: 'openai', model: '' });
    usage(() => build({ openai: true }), /--goal is required/);
  });

  test('bad files and contradictory flags are one-line usage errors', () => {
    usage(() => build({ input: 'broken.json' }), /^--input: broken.json is not valid JSON/);
    usage(() => build({ input: 'missing.json' }), /cannot read missing.json: no such file/);
    usage(() => build({ input: 'wrong.json', scenario: 'wallet-debit' }), /^--input: wrong.json: strategy: /);
    usage(() => build({}), /one of --scenario <name>, --openai or --input/);
    usage(() => build({ scenario: 'wallet-debit', openai: true }), /exclude each other/);
    usage(() => build({ scenario: 'nope' }), /unknown scenario "nope" \(known: wallet-debit, two-debits\)/);
    usage(() => build({ openai: true, goal: 'g', vars: ['a=1'] }), /--var applies to scripted runs/);
    usage(() => build({ scenario: 'wallet-debit', model: 'm' }), /--model applies to --openai/);
    usage(() => build({ scenario: 'wallet-debit', principal: 'alice' }), /--principal/);
  });
});

describe('the list query', () => {
  test('is built from the search attributes', () => {
    expect(buildListQuery({})).toBe(`WorkflowType = 'agentRun'`);
    expect(
      buildListQuery({
        status: 'waiting_for_operator',
        principal: 'user:alice',
        tenant: 'acme',
        unknown: true,
        pendingApprovals: true,
        stopReason: 'completed',
        strategy: 'check_receipt',
      }),
    ).toBe(
      "WorkflowType = 'agentRun' AND LedgerloopStatus = 'waiting_for_operator' AND LedgerloopPrincipal = 'user:alice' AND LedgerloopTenant = 'acme' AND LedgerloopStrategy = 'check_receipt' AND LedgerloopStopReason = 'completed' AND LedgerloopUnknownCalls > 0 AND LedgerloopPendingApprovals > 0",
    );
  });

  test('refuses values that would need escaping, and notes values it does not know', () => {
    usage(() => buildListQuery({ status: "x' OR 1=1" }), /--status/);
    expect(filterWarnings({ status: 'runing' })).toEqual([expect.stringContaining('"runing" is not a status')]);
    expect(filterWarnings({ status: 'running', stopReason: 'completed' })).toEqual([]);
  });
});

describe('errors, rendering and progress', () => {
  test('an unknown workflow id is a usage error naming the id; a closed one is a refusal', () => {
    const e = toCliError(new WorkflowNotFoundError('not found', 'wf-1', undefined), {
      address: 'a:1',
      namespace: 'default',
    });
    expect(e).toBeInstanceOf(RunNotFoundError);
    expect(e.exitCode).toBe(EXIT_USAGE);
    expect(e.message).toBe('unknown run id "wf-1": no such workflow in namespace default');
    const closed = toCliError(new WorkflowNotFoundError('workflow execution already completed', 'wf-1', undefined), {
      address: 'a:1',
      namespace: 'default',
    });
    expect(closed).toMatchObject({
      exitCode: EXIT_FAILED,
      message: 'run wf-1 has already closed (workflow execution already completed)',
    });
  });

  test('tables pad columns; an event is one line', () => {
    expect(renderTable(['A', 'BB'], [['xyz', '1']])).toBe('A    BB\n---  --\nxyz  1');
    const e = {
      type: 'ToolResultRecorded',
      logicalCallId: 'lc_1_a',
      state: 'SUCCEEDED',
      attempts: 1,
      receipt: 'wd_1',
      replayed: false,
      fence: 1001,
      seq: 7,
      at: '2030-01-01T00:00:00.000Z',
    } as LedgerEvent;
    expect(eventLine(e)).toBe(
      '#7   2030-01-01T00:00:00.000Z  ToolResultRecorded       lc_1_a state=SUCCEEDED attempts=1 receipt=wd_1 fence=1001',
    );
  });

  test('replay lines keep the nondeterminism message and drop the Rust dump around it', () => {
    const raw =
      'Replay failed. Details: Failure { failure: Some(Failure { message: "[TMPRL1100] Nondeterminism error: Timer machine", source: "" }) }';
    expect(briefly(raw)).toBe('[TMPRL1100] Nondeterminism error: Timer machine');
    expect(replayLine({ file: 'a.json', ok: true, events: 12, ms: 1500 })).toBe('✓ a.json  (12 events, 1.5s)');
    expect(replayLine({ file: 'b.json', ok: false, ms: 1, error: 'DeterminismViolationError', message: 'x' })).toBe(
      '✗ b.json  DeterminismViolationError: x',
    );
  });

  test('progress: plain lines without a terminal, a spinner line with one', () => {
    let t = 0;
    const plain: string[] = [];
    const p = startProgress('waiting', {
      stream: { write: (s: string) => plain.push(s) },
      tty: false,
      now: () => t,
      heartbeatMs: 0,
    });
    t = 2_500;
    p.succeed();
    p.fail(); // a second end is ignored
    expect(plain).toEqual(['waiting…\n', '✓ waiting (2.5s)\n']);

    const tty: string[] = [];
    const q = startProgress('bundling', { stream: { write: (s: string) => tty.push(s) }, tty: true, now: () => 0 });
    q.stop();
    expect(tty[0]).toMatch(/^\r\x1b\[2K. bundling 0ms$/);
    expect(tty.at(-1)).toBe('\r\x1b[2K');
    expect(formatElapsed(185_000)).toBe('3m05s');
  });
});
