/**
 * `ledgerloop audit`: does the durable record name, for every effect, the principal, tenant, policy version,
 * worker identity, operation key, arguments hash, receipt and fence? Reads them from the ledger (the `ledger`
 * query, which a worker answers by replaying the history) and cross-checks them against the raw history's
 * activity inputs and results and ActivityTaskStarted identities. Exit 1 when anything is missing or disagrees.
 */
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow';
import type { Command } from 'commander';
import { auditRun, FIELD_LABELS, type AuditCheck, type AuditReport, type CheckStatus } from '../../host/client/audit';
import { historyEvidence } from '../../host/client/history-evidence';
import { readLedger } from '../../host/client/runs';
import { addConnectionOptions, addTimeoutOption, withSession, type ConnectionFlags } from '../connect';
import { EXIT_FAILED } from '../errors';
import { withProgress } from '../progress';
import { describeRun } from './read-run';
import { configureCommand, printJson, runAction, runCommand, type CommandIO } from './shared';

interface AuditFlags extends ConnectionFlags {
  readonly json: boolean;
  readonly timeout: number;
}

const MARK: Readonly<Record<CheckStatus, string>> = { ok: '✓', warn: '!', na: '·', missing: '✗', mismatch: '✗' };

function checkLine(c: AuditCheck): string {
  const value = c.ledger ?? c.history?.join(', ') ?? (c.status === 'na' ? 'n/a' : '—');
  const note = c.note
    ? `  (${c.status === 'mismatch' ? 'MISMATCH: ' : ''}${c.note})`
    : c.status === 'mismatch'
      ? '  (MISMATCH)'
      : '';
  return `  ${MARK[c.status]} ${FIELD_LABELS[c.field].padEnd(16)} ${value}${note}`;
}

/** The human checklist: one block per call, then a verdict line. */
export function auditText(workflowId: string, r: AuditReport): string {
  const lines = [`audit ${workflowId}: ${r.calls.length} effect-bearing call(s)`];
  if (r.calls.length === 0) lines.push('  (no call reached dispatch: nothing to audit)');
  for (const c of r.calls)
    lines.push('', `${c.ok ? '✓' : '✗'} ${c.logicalCallId}  ${c.toolName}  ${c.state}`, ...c.checks.map(checkLine));
  for (const n of r.notes) lines.push('', `✗ ${n}`);
  lines.push(
    '',
    r.ok
      ? 'PASS: the history names every field for every effect'
      : `FAIL: ${r.problems} field(s) missing or mismatched`,
  );
  return `${lines.join('\n')}\n`;
}

export function registerAudit(program: Command, io: CommandIO): void {
  const cmd = runCommand(
    program,
    'audit',
    'check that the history alone names, for every effect, who, under which policy, on which worker, key, hash, receipt and fence',
  ).option('--json', 'print the report as JSON', false);
  addTimeoutOption(cmd, 'the ledger query');
  addConnectionOptions(cmd);
  configureCommand(cmd, io);
  cmd.action((workflowId: string, flags: AuditFlags) =>
    runAction(cmd, io, () =>
      withSession(flags, workflowId, async (s) => {
        const { handle, description } = await describeRun(s, workflowId);
        const report = await withProgress(
          `auditing ${workflowId}`,
          async () => {
            const ledger = await s.answered(
              'ledger query',
              workflowId,
              flags.timeout,
              () => readLedger(handle),
              description.taskQueue,
            );
            const history = await handle.fetchHistory();
            const evidence = await historyEvidence(history, loadDataConverter(s.dataConverter));
            return auditRun(ledger.events, evidence, ledger.projection);
          },
          { stream: io.err },
        );
        if (flags.json) printJson(io, { workflowId, execution: description.status.name, ...report });
        else io.out(auditText(workflowId, report));
        return report.ok ? 0 : EXIT_FAILED;
      }),
    ),
  );
}
