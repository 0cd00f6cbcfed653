/** The fault protocol format: good files parse, bad files are refused with the field named, the schema is current. */
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { faultProtocolJsonSchema, SCHEMA_FILE } from '../../lab/faults/json-schema';
import { CRASH_POINT_NAMES, FAULT_KINDS } from '../../lab/faults/catalog';
import { METRIC_NAMES } from '../../lab/faults/metrics';
import { runFaultsCommand } from '../../lab/faults/runner';
import {
  Approver,
  Case,
  Expectation,
  Fault,
  FaultProtocol,
  loadProtocol,
  parseProtocol,
  ProtocolFormatError,
} from '../../lab/faults/protocol-format';

/** The example of issue #3, verbatim: it must keep working as the format grows. */
const ISSUE_EXAMPLE = `{ "format": "ledgerloop.fault-protocol/1", "seed": 7, "runDeadlineMs": 60000,
  "attemptLimits": { "model": 3, "tool": 3, "reconcile": 5, "compensation": 5 },
  "cases": [ { "name": "lost debit response, same-key replay", "scenario": "wallet-debit",
      "input": { "principal": "user:alice", "tenant": "acme", "account": "acct_1", "amount": { "minor": 1250, "currency": "EUR" } },
      "strategy": "same_key_replay",
      "faults": [ { "at": "downstream.after_commit", "do": "drop_response", "occurrence": 1 } ],
      "expect": [ { "metric": "business_effect_count", "op": "==", "value": 1 }, { "metric": "attempt_count", "op": ">=", "value": 2 }, { "metric": "projection_hash_stable", "op": "==", "value": true } ] } ] }`;

function example(): { cases: Array<Record<string, unknown>> } & Record<string, unknown> {
  return JSON.parse(ISSUE_EXAMPLE) as { cases: Array<Record<string, unknown>> } & Record<string, unknown>;
}

/** The issues of a protocol that must be refused. */
function issuesOf(raw: unknown): { path: string; message: string }[] {
  try {
    parseProtocol(raw, 'test.json');
  } catch (err) {
    expect(err).toBeInstanceOf(ProtocolFormatError);
    return [...(err as ProtocolFormatError).issues];
  }
  throw new Error('the protocol was accepted');
}

describe('a good protocol parses', () => {
  test('the issue example parses as written, with defaults filled in', () => {
    const p = parseProtocol(JSON.parse(ISSUE_EXAMPLE));
    expect(p.cases[0]).toMatchObject({
      name: 'lost debit response, same-key replay',
      strategy: 'same_key_replay',
      faults: [{ at: 'downstream.after_commit', do: 'drop_response' }],
    });
  });

  test('protocols/workshop.json parses', () => {
    const p = loadProtocol(path.join(__dirname, '..', '..', 'protocols', 'workshop.json'));
    expect(p.cases.map((c) => c.name)).toContain('stale fence');
  });
});

describe('a bad protocol names the field and runs nothing', () => {
  test.each([
    [
      'an unsupported format',
      (p: ReturnType<typeof example>) => (p.format = 'ledgerloop.fault-protocol/9'),
      'format',
      /unsupported format/,
    ],
    [
      'an unknown crash point',
      (p: ReturnType<typeof example>) => ((p.cases[0]!.faults as object[])[0] = { at: 'worker.somewhere', do: 'kill' }),
      'cases[0].faults[0].at',
      /unknown crash point/,
    ],
    [
      'a fault kind the point does not take',
      (p: ReturnType<typeof example>) => ((p.cases[0]!.faults as object[])[0] = { at: 'server.mid_run', do: 'kill' }),
      'cases[0].faults[0].do',
      /cannot happen at "server.mid_run"/,
    ],
    [
      'an unknown metric',
      (p: ReturnType<typeof example>) =>
        ((p.cases[0]!.expect as object[])[0] = { metric: 'charges', op: '==', value: 1 }),
      'cases[0].expect[0].metric',
      /unknown metric "charges"/,
    ],
    [
      'an ordered comparison on a boolean',
      (p: ReturnType<typeof example>) =>
        ((p.cases[0]!.expect as object[])[2] = { metric: 'projection_hash_stable', op: '>=', value: true }),
      'cases[0].expect[2].op',
      /needs a number metric/,
    ],
    [
      'a value of the wrong type',
      (p: ReturnType<typeof example>) =>
        ((p.cases[0]!.expect as object[])[0] = { metric: 'business_effect_count', op: '==', value: 'one' }),
      'cases[0].expect[0].value',
      /is a number, not a string/,
    ],
    [
      'an unknown scenario',
      (p: ReturnType<typeof example>) => (p.cases[0]!.scenario = 'teleport'),
      'cases[0].scenario',
      /unknown scenario "teleport"/,
    ],
    [
      'an unknown field',
      (p: ReturnType<typeof example>) => (p.cases[0]!.retries = 3),
      'cases[0].retries',
      /Unrecognized key/,
    ],
    ['a negative seed', (p: ReturnType<typeof example>) => (p.seed = -1), 'seed', /./],
    [
      'publish_policy without a policy',
      (p: ReturnType<typeof example>) =>
        ((p.cases[0]!.faults as object[])[0] = { at: 'policy.before_dispatch', do: 'publish_policy' }),
      'cases[0].faults[0].policy',
      /needs the policy/,
    ],
    [
      'a downstream field on an in-process point',
      (p: ReturnType<typeof example>) =>
        ((p.cases[0]!.faults as object[])[0] = { at: 'tool.before_send', do: 'kill', service: 'wallet' }),
      'cases[0].faults[0].service',
      /does not apply/,
    ],
  ])('%s', (_what, mutate, field, message) => {
    const p = example();
    mutate(p);
    const issues = issuesOf(p);
    expect(issues).toContainEqual({ path: field, message: expect.stringMatching(message) });
  });

  test('a case without assertions is refused', () => {
    const p = example();
    p.cases[0]!.expect = [];
    expect(issuesOf(p).map((i) => i.path)).toContain('cases[0].expect');
  });

  test('two cases with one name are refused', () => {
    const p = example();
    p.cases.push({ ...p.cases[0]! });
    expect(issuesOf(p)).toContainEqual({ path: 'cases[1].name', message: 'duplicate case name (also cases[0])' });
  });

  test('the error message lists every issue with its path', () => {
    const p = example();
    p.format = 'nope';
    p.runDeadlineMs = 10;
    try {
      parseProtocol(p, 'my.json');
      throw new Error('accepted');
    } catch (err) {
      expect((err as Error).message).toMatch(
        /^my\.json is not a valid fault protocol:\n {2}format: .*\n {2}runDeadlineMs: /,
      );
    }
  });

  test('a file that is not JSON is refused before anything is validated', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-fault-format-'));
    const file = path.join(dir, 'broken.json');
    writeFileSync(file, '{ "format": ');
    expect(() => loadProtocol(file)).toThrow(/broken\.json is not a valid fault protocol:\n {2}\(root\): not JSON/);
  });
});

test('docs/fault-protocol.schema.json is the JSON Schema generated from the zod schema (regenerate: node -r tsx/cjs scripts/fault-schema.ts)', () => {
  const onDisk = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as unknown;
  expect(onDisk).toEqual(faultProtocolJsonSchema());
});

describe('docs/fault-protocol.md explains every field, crash point, fault kind and metric', () => {
  const doc = readFileSync(path.join(__dirname, '..', '..', 'docs', 'fault-protocol.md'), 'utf8');
  const shapes = {
    protocol: FaultProtocol.shape,
    case: Case.shape,
    fault: Fault.shape,
    expectation: Expectation.shape,
    approver: Approver.shape,
  };
  test.each(Object.entries(shapes).flatMap(([where, shape]) => Object.keys(shape).map((k) => [where, k])))(
    '%s field `%s`',
    (_where, field) => {
      expect(doc).toContain(`\`${field}\``);
    },
  );
  test.each([...CRASH_POINT_NAMES, ...FAULT_KINDS, ...METRIC_NAMES])('`%s`', (name) => {
    expect(doc).toContain(`\`${name}\``);
  });
});

test('`ledgerloop faults` on a bad file exits 2, names the field and runs nothing', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-fault-cli-'));
  const file = path.join(dir, 'bad.json');
  const p = example();
  (p.cases[0]!.faults as object[])[0] = { at: 'downstream.after_commit', do: 'restart_server' };
  writeFileSync(file, JSON.stringify(p));
  const written: string[] = [];
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    await expect(runFaultsCommand(file, {})).resolves.toBe(2);
  } finally {
    spy.mockRestore();
  }
  expect(written.join('')).toMatch(
    /cases\[0\]\.faults\[0\]\.do: "restart_server" cannot happen at "downstream\.after_commit"[\s\S]*Nothing was run\./,
  );
});
