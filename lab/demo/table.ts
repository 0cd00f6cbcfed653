/**
 * Renders the demo rows: a fixed-width table for a terminal, and the sentences about them. Every sentence is
 * computed from the measured figures of the rows; none claims what the rows do not show.
 */
import { isLabStrategy } from '../strategies';
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

const short = (hash: string): string => `${hash.slice(0, 16)}…`;

export function renderTable(rows: readonly DemoRow[]): string {
  const cell = (r: DemoRow, k: keyof DemoRow): string => {
    const v = String(r[k]);
    return k.startsWith('projectionHash') ? short(v) : v;
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
  /** Empty when every safety claim held: safe strategies charged at most once and agree with the wallet, hashes held. */
  readonly violations: readonly string[];
}

const count = (n: number, one: string): string => `${n} ${n === 1 ? one : `${one}s`}`;
const charged = (n: number): string => (n === 0 ? 'charged nothing' : n === 1 ? 'charged once' : `charged ${n} times`);
const list = (xs: readonly string[]): string =>
  xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs.at(-1)!}`;

/** Where the run's record of the call contradicts the wallet's database, or undefined when they agree. */
function contradiction(r: DemoRow): string | undefined {
  if (r.finalState === 'MISSING')
    return `${r.strategy}: the run's result has no record of the call, but the wallet committed ${count(r.effects, 'debit')}.`;
  if (r.finalState === 'FAILED' && r.effects > 0)
    return `${r.strategy}: the run recorded the call FAILED, but the wallet committed ${count(r.effects, 'debit')}.`;
  if (r.finalState === 'SUCCEEDED' && r.effects === 0)
    return `${r.strategy}: the run recorded the call SUCCEEDED, but the wallet committed no debit.`;
  return undefined;
}

function describeRow(r: DemoRow): DemoReport {
  const lab = isLabStrategy(r.strategy);
  const sentences = [
    `${r.strategy} ${charged(r.effects)} for one intent: over ${count(r.attempts, 'Temporal attempt')} the wallet received ` +
      `${count(r.dispatches, 'request')} and committed ${count(r.effects, 'debit')}; the run recorded the call ${r.finalState}.`,
  ];
  const violations: string[] = [];
  if (lab && r.effects <= 1) sentences.push(`${r.strategy} did not reproduce the double charge in this run.`);
  if (!lab && r.effects > 1) {
    violations.push(
      `SAFETY VIOLATION: ${r.strategy} is a safe strategy and ${charged(r.effects)} for one intent (run ${r.workflowId}).`,
    );
  }
  const disagrees = contradiction(r);
  if (disagrees !== undefined) {
    sentences.push(disagrees);
    if (!lab) violations.push(`SAFETY VIOLATION: ${disagrees} (run ${r.workflowId})`);
  }
  if (r.projectionHashBefore === r.projectionHashAfter) {
    sentences.push(
      `${r.strategy}: the second worker rebuilt the same projection hash (${short(r.projectionHashAfter)}) from the history as the first worker held before it was killed.`,
    );
  } else {
    const changed = `${r.strategy}: the projection hash changed across the restart: ${short(r.projectionHashBefore)} before the kill, ${short(r.projectionHashAfter)} after replay.`;
    sentences.push(changed);
    violations.push(`REPLAY VIOLATION: ${changed} (run ${r.workflowId})`);
  }
  return { sentences, violations };
}

/** The demo's sentences, each computed from the rows; `violations` lists every safety claim the rows refute. */
export function describeRows(rows: readonly DemoRow[]): DemoReport {
  const each = rows.map(describeRow);
  const sentences = each.flatMap((d) => d.sentences);
  const violations = each.flatMap((d) => d.violations);
  if (rows.length > 1) {
    sentences.push(
      `Debits per intent under the same crash: ${rows.map((r) => `${r.strategy} ${r.effects}`).join(', ')}.`,
    );
    const doubled = rows.filter((r) => isLabStrategy(r.strategy) && r.effects > 1);
    const safe = rows.filter((r) => !isLabStrategy(r.strategy));
    if (doubled.length > 0 && safe.length > 0 && safe.every((r) => r.effects === 1)) {
      const once = safe.length > 1 ? 'charged once each' : 'charged once';
      sentences.push(
        `${list(doubled.map((r) => r.strategy))} charged more than once; ${list(safe.map((r) => r.strategy))} ${once}.`,
      );
    }
  }
  return { sentences, violations };
}
