/**
 * The protocol report: the JSON written with `--report` and the readable table printed at the end of a run.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CaseResult } from './case-runner';
import type { Plan } from './plan';

export const REPORT_FORMAT = 'ledgerloop.fault-report/1';

export interface ProtocolReport {
  readonly format: typeof REPORT_FORMAT;
  readonly protocolFormat: string;
  readonly protocolFile: string;
  readonly seed: number;
  readonly planFingerprint: string;
  readonly passed: boolean;
  readonly durationMs: number;
  readonly cases: readonly CaseResult[];
}

export function buildReport(
  file: string,
  protocolFormat: string,
  plan: Plan,
  cases: readonly CaseResult[],
  durationMs: number,
): ProtocolReport {
  return {
    format: REPORT_FORMAT,
    protocolFormat,
    protocolFile: file,
    seed: plan.seed,
    planFingerprint: plan.fingerprint,
    passed: cases.length > 0 && cases.every((c) => c.passed),
    durationMs,
    cases,
  };
}

export function writeReport(file: string, report: ProtocolReport): void {
  mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
}

const COLUMNS: ReadonlyArray<[string, (c: CaseResult) => string]> = [
  ['case', (c) => c.name],
  ['result', (c) => (c.passed ? 'PASS' : 'FAIL')],
  ['effects', (c) => String(c.metrics.business_effect_count ?? '-')],
  ['dispatches', (c) => String(c.metrics.dispatch_count ?? '-')],
  ['attempts', (c) => String(c.metrics.attempt_count ?? '-')],
  ['ampl.', (c) => String(c.metrics.retry_amplification ?? '-')],
  ['final', (c) => String(c.metrics.final_state ?? '-')],
  ['stop', (c) => String(c.metrics.stop_reason || '-')],
  // what the stop left for an operator: RunCompleted.leftStanding, the structured field, never the prose
  ['left', (c) => String(c.metrics.left_standing_count ?? '-')],
  [
    'hash stable',
    (c) => (c.metrics.projection_hash_stable === undefined ? '-' : c.metrics.projection_hash_stable ? 'yes' : 'NO'),
  ],
  ['replay', (c) => (c.metrics.replay_ok === undefined ? '-' : c.metrics.replay_ok ? 'ok' : 'ERROR')],
  ['time', (c) => `${(c.durationMs / 1000).toFixed(1)}s`],
];

/** A fixed-width table, one row per case. */
export function renderCaseTable(cases: readonly CaseResult[]): string {
  const cells = cases.map((c) => COLUMNS.map(([, f]) => f(c)));
  const widths = COLUMNS.map(([title], i) => Math.max(title.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: readonly string[]): string =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(COLUMNS.map(([t]) => t)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** The table, then every failure, then each case's write-up. */
export function renderSummary(report: ProtocolReport): string {
  const out = [renderCaseTable(report.cases), ''];
  const failures = report.cases.flatMap((c) => c.failures.map((f) => `  FAIL ${f.message}`));
  if (failures.length > 0) out.push('Failed assertions:', ...failures, '');
  out.push('Lab write-up:');
  for (const c of report.cases) {
    out.push(`  ${c.name}:`);
    for (const s of c.writeup) out.push(`    ${s}`);
  }
  const passed = report.cases.filter((c) => c.passed).length;
  out.push(
    '',
    `${passed} of ${report.cases.length} cases passed in ${(report.durationMs / 1000).toFixed(1)} s (seed ${report.seed}, plan ${report.planFingerprint})`,
  );
  return out.join('\n');
}
