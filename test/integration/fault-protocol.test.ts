/**
 * The fault runner end to end on real processes (the dev server `npm test` starts, fresh wallet and worker
 * processes per case): a lost response, a stale write from a SIGSTOPped worker refused by the fence, and a
 * protocol whose assertion is wrong, which must fail naming the case, the metric, the expected and the observed.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProtocol } from '../../lab/faults/runner';
import type { ProtocolReport } from '../../lab/faults/report';

jest.setTimeout(300_000);

const input = { principal: 'user:alice', tenant: 'acme', account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } };

const protocol = {
  format: 'ledgerloop.fault-protocol/1',
  seed: 3,
  runDeadlineMs: 45_000,
  cases: [
    {
      name: 'lost response, same key',
      scenario: 'wallet-debit',
      input,
      strategy: 'same_key_replay',
      faults: [{ at: 'downstream.after_commit', do: 'drop_response' }],
      expect: [
        { metric: 'business_effect_count', op: '==', value: 1 },
        { metric: 'attempt_count', op: '>=', value: 2 },
        { metric: 'projection_hash_stable', op: '==', value: true },
        { metric: 'replay_ok', op: '==', value: true },
      ],
    },
    {
      name: 'stale write after a pause',
      scenario: 'wallet-debit',
      input,
      strategy: 'same_key_replay',
      faults: [{ at: 'tool.in_flight', do: 'pause' }],
      expect: [
        { metric: 'business_effect_count', op: '==', value: 1 },
        { metric: 'stale_dispatch_count', op: '==', value: 0 },
        { metric: 'refused_dispatch_count', op: '>=', value: 1 },
        { metric: 'faults_fired', op: '==', value: 1 },
      ],
    },
    {
      name: 'blind retry, wrongly expected to charge once',
      scenario: 'wallet-debit',
      input,
      strategy: 'blind_retry',
      faults: [{ at: 'downstream.after_commit', do: 'drop_response' }],
      expect: [{ metric: 'business_effect_count', op: '==', value: 1 }],
    },
  ],
};

let report: ProtocolReport;
let reportFile: string;
const printed: string[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-fault-it-'));
  const file = path.join(dir, 'protocol.json');
  reportFile = path.join(dir, 'report.json');
  writeFileSync(file, JSON.stringify(protocol));
  report = await runProtocol({
    file,
    reportFile,
    dataDir: path.join(dir, 'data'),
    say: () => undefined,
    print: (t) => printed.push(t),
  });
});

const byName = (name: string) => report.cases.find((c) => c.name === name)!;

test('a lost response replayed under the same key charges once, and replay rebuilds the same projection', () => {
  const c = byName('lost response, same key');
  expect(c.failures).toEqual([]);
  expect(c.metrics).toMatchObject({
    business_effect_count: 1,
    dispatch_count: 2,
    final_state: 'SUCCEEDED',
    completed: true,
  });
  expect(c.writeup.join(' ')).toMatch(/UNKNOWN after the lost response, not FAILED/);
});

test('a request held on the wire while its worker is SIGSTOPped arrives stale and the wallet refuses it by fence', () => {
  const c = byName('stale write after a pause');
  expect(c.failures).toEqual([]);
  expect(c.metrics).toMatchObject({
    business_effect_count: 1,
    dispatch_count: 2,
    stale_dispatch_count: 0,
    refused_dispatch_count: 1,
  });
  const kinds = c.timeline.map((e) => e.kind);
  expect(kinds).toEqual(expect.arrayContaining(['worker_paused', 'worker_resumed']));
  expect(c.timeline.find((e) => e.text.startsWith('delivered the stale request late'))?.text).toMatch(
    /409 .*Fence\.Stale/,
  );
});

test('a wrong assertion fails the case and names the case, the metric, the expected and the observed value', () => {
  const c = byName('blind retry, wrongly expected to charge once');
  expect(c.passed).toBe(false);
  expect(c.failures).toEqual([
    expect.objectContaining({
      metric: 'business_effect_count',
      expected: 1,
      observed: 2,
      message: 'case "blind retry, wrongly expected to charge once": expected business_effect_count == 1, observed 2',
    }),
  ]);
  expect(report.passed).toBe(false);
});

test('the JSON report and the printed summary carry every case', () => {
  const onDisk = JSON.parse(readFileSync(reportFile, 'utf8')) as ProtocolReport;
  expect(onDisk).toMatchObject({ format: 'ledgerloop.fault-report/1', seed: 3, passed: false });
  expect(onDisk.cases.map((c) => [c.name, c.passed])).toEqual([
    ['lost response, same key', true],
    ['stale write after a pause', true],
    ['blind retry, wrongly expected to charge once', false],
  ]);
  const text = printed.join('\n');
  expect(text).toMatch(/^plan [0-9a-f]{16} · seed 3/m);
  expect(text).toContain(
    'FAIL case "blind retry, wrongly expected to charge once": expected business_effect_count == 1, observed 2',
  );
  expect(text).toContain('2 of 3 cases passed');
});
