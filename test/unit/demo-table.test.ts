/**
 * The demo's sentences say what its measured rows say, whatever the figures: a strategy that charged once is not
 * called a double charge, a safe strategy that charged twice is reported loudly (and fails the demo), a projection
 * hash that changed across the restart is not called stable.
 */
import type { DemoRow } from '../../lab/demo/opening-failure';
import { describeRows, renderTable } from '../../lab/demo/table';

const H1 = 'a'.repeat(64);
const H2 = 'b'.repeat(64);

function row(over: Partial<DemoRow> & Pick<DemoRow, 'strategy'>): DemoRow {
  return {
    attempts: 2,
    dispatches: 1,
    effects: 1,
    finalState: 'SUCCEEDED',
    projectionHashBefore: H1,
    projectionHashAfter: H1,
    workflowId: `opening-failure-${over.strategy}-1`,
    stopReason: 'completed',
    ...over,
  };
}

const usual: DemoRow[] = [
  row({ strategy: 'blind_retry', attempts: 2, dispatches: 2, effects: 2 }),
  row({ strategy: 'check_receipt', attempts: 2, dispatches: 1, effects: 1 }),
  row({ strategy: 'same_key_replay', attempts: 2, dispatches: 2, effects: 1 }),
];

/** The sentences about one strategy (they name it). */
const about = (sentences: readonly string[], strategy: string): string =>
  sentences.filter((s) => s.includes(strategy)).join('\n');

describe('the usual figures', () => {
  const r = describeRows(usual);
  test('the double charge is stated with its figures, the safe strategies charged once', () => {
    expect(about(r.sentences, 'blind_retry')).toMatch(/blind_retry charged 2 times/);
    expect(about(r.sentences, 'blind_retry')).toMatch(/2 requests/);
    expect(about(r.sentences, 'check_receipt')).toMatch(/check_receipt charged once/);
    expect(about(r.sentences, 'same_key_replay')).toMatch(/same_key_replay charged once/);
    expect(about(r.sentences, 'same_key_replay')).toMatch(/2 requests/);
  });
  test('stable hashes are reported as stable, and nothing fails', () => {
    expect(r.sentences.join('\n')).toMatch(/rebuilt the same projection hash/);
    expect(r.sentences.join('\n')).not.toMatch(/changed|differ|VIOLATION/i);
    expect(r.violations).toEqual([]);
  });
});

describe('figures other than the usual ones', () => {
  const odd: DemoRow[] = [
    row({ strategy: 'blind_retry', attempts: 2, dispatches: 1, effects: 1 }),
    row({ strategy: 'check_receipt', attempts: 3, dispatches: 2, effects: 2 }),
    row({ strategy: 'same_key_replay', attempts: 2, dispatches: 2, effects: 1, projectionHashAfter: H2 }),
  ];
  const r = describeRows(odd);
  const text = r.sentences.join('\n');

  test('blind_retry that charged once is not called a double charge', () => {
    expect(text).not.toMatch(/blind_retry charged twice/);
    expect(about(r.sentences, 'blind_retry')).toMatch(/blind_retry charged once/);
  });

  test('a safe strategy that charged twice is said loudly and fails the demo', () => {
    expect(about(r.sentences, 'check_receipt')).toMatch(/check_receipt charged 2 times/);
    expect(about(r.sentences, 'check_receipt')).toMatch(/3 Temporal attempts/);
    expect(text).not.toMatch(/one charge each|charged once each/);
    expect(r.violations.join('\n')).toMatch(/SAFETY VIOLATION.*check_receipt.*charged 2 times/);
  });

  test('a projection hash that changed across the restart is reported, with both hashes, and fails the demo', () => {
    const s = about(r.sentences, 'same_key_replay');
    expect(s).toMatch(/changed/);
    expect(s).toContain(H1.slice(0, 16));
    expect(s).toContain(H2.slice(0, 16));
    expect(s).not.toMatch(/rebuilt the same projection hash/);
    expect(r.violations.join('\n')).toMatch(/same_key_replay.*projection hash/);
  });
});

test('a final state the wallet contradicts is reported, not glossed over', () => {
  const r = describeRows([
    row({ strategy: 'blind_retry', attempts: 4, dispatches: 2, effects: 2, finalState: 'FAILED' }),
    row({ strategy: 'same_key_replay', effects: 1, finalState: 'FAILED' }),
  ]);
  expect(about(r.sentences, 'blind_retry')).toMatch(/recorded the call FAILED.*wallet committed 2 debits/);
  // A safe strategy whose record disagrees with the downstream fails the demo; the lab strategy only reports it.
  expect(r.violations.join('\n')).toMatch(/same_key_replay/);
  expect(r.violations.join('\n')).not.toMatch(/blind_retry/);
});

test('the comparison sentence is computed: no "once each" when a safe strategy charged nothing', () => {
  const r = describeRows([
    row({ strategy: 'blind_retry', dispatches: 2, effects: 2 }),
    row({ strategy: 'check_receipt', dispatches: 0, effects: 0, finalState: 'UNKNOWN' }),
  ]);
  expect(r.sentences.join('\n')).not.toMatch(/once each/);
  expect(about(r.sentences, 'check_receipt')).toMatch(/check_receipt charged nothing/);
});

test('the table prints the measured figures', () => {
  const t = renderTable(usual);
  expect(t.split('\n')).toHaveLength(5);
  expect(t).toMatch(/blind_retry\s+2\s+2\s+2\s+SUCCEEDED/);
});
