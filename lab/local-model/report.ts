/** How the model runs are printed: each proposal with its raw arguments and the pipeline's verdict, then the stop. */
import type { ModelRun } from './runs';
import type { CheckReport, RunSummary } from './check';

const clip = (s: string, n = 160): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** The lines describing one run: goal, proposals turn by turn, stop, and the check's verdict on it. */
export function describeRun(run: ModelRun, summary: RunSummary): string[] {
  const lines = [`${run.name}: ${run.goal}`];
  const calls = new Map((run.result?.calls ?? []).map((c) => [c.logicalCallId, c] as const));
  const providerIds = new Map<string, string>();
  for (const e of run.events) if (e.type === 'ToolProposalRecorded') providerIds.set(e.logicalCallId, e.providerCallId);
  let turn = 0;
  for (const p of summary.proposals) {
    if (p.turn !== turn) {
      turn = p.turn;
      lines.push(`  turn ${turn}:`);
    }
    const raw = run.rawArguments.get(providerIds.get(p.logicalCallId) ?? '') ?? '(not in the transcript)';
    lines.push(
      p.origin === 'model'
        ? `    the model proposed ${p.toolName} ${clip(raw)}`
        : `    the workflow proposed ${p.toolName} to offset an effect`,
    );
    if (p.verdict === 'rejected') lines.push(`      → rejected ${p.code}: ${clip(p.message ?? '')}`);
    else if (p.verdict === 'unvalidated') lines.push('      → NEVER VALIDATED');
    else {
      const call = calls.get(p.logicalCallId);
      lines.push(
        `      → valid, canonicalized under ${p.operationKey?.slice(0, 14)}…; the call ended ${call?.state ?? 'without a state'}${call?.receipt ? ` (${call.receipt})` : ''}`,
      );
    }
  }
  if (run.result?.finalText !== undefined) lines.push(`  final answer: ${clip(JSON.stringify(run.result.finalText))}`);
  const margin =
    summary.marginMs !== undefined ? `; closed ${(summary.marginMs / 1000).toFixed(1)} s before its deadline` : '';
  lines.push(
    `  stop: ${summary.stopReason} (${clip(summary.detail, 200)}) after ${summary.turns} model turn(s), ${run.seconds} s${margin}`,
  );
  lines.push(`  effects in the services' own databases: ${summary.effects} for ${summary.intents} intent(s)`);
  lines.push(
    summary.violations.length === 0
      ? '  check: at most one effect per intent, every proposal validated, a typed stop before the deadline: all held'
      : `  check: ${summary.violations.length} VIOLATION(S):`,
  );
  for (const v of summary.violations) lines.push(`    !! ${v.check}: ${v.message}`);
  return lines;
}

/** One line per run, for CI logs. */
export function runLine(s: RunSummary): string {
  const proposals = s.proposals.filter((p) => p.origin === 'model');
  const valid = proposals.filter((p) => p.verdict === 'valid').length;
  const rejected = proposals.filter((p) => p.verdict === 'rejected');
  const codes = [...new Set(rejected.map((p) => p.code))].join(', ');
  return (
    `${s.name}: ${s.stopReason} after ${s.turns} turn(s); ${proposals.length} proposal(s), ${valid} valid, ` +
    `${rejected.length} rejected${codes ? ` (${codes})` : ''}; ${s.intents} intent(s), ${s.effects} effect(s)` +
    `${s.marginMs !== undefined ? `; ${(s.marginMs / 1000).toFixed(1)} s before the deadline` : ''}; ` +
    `${s.violations.length === 0 ? 'ok' : `${s.violations.length} violation(s)`}`
  );
}

/** Totals over a report: proposals valid, runs completed, stop reasons. */
export function totals(report: CheckReport) {
  const proposals = report.runs.flatMap((r) => r.proposals).filter((p) => p.origin === 'model');
  const stopReasons: Record<string, number> = {};
  for (const r of report.runs) stopReasons[r.stopReason] = (stopReasons[r.stopReason] ?? 0) + 1;
  return {
    runs: report.runs.length,
    completed: report.runs.filter((r) => r.stopReason === 'completed').length,
    proposals: proposals.length,
    valid: proposals.filter((p) => p.verdict === 'valid').length,
    rejected: proposals.filter((p) => p.verdict === 'rejected').length,
    stopReasons,
    violations: report.violations.length,
  };
}
