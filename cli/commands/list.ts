/** `ledgerloop list`: agent runs from the visibility API, filtered by Ledgerloop's search attributes. */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import type { Command } from 'commander';
import { strategyNames } from '../../src/domain/retry-strategies';
import { SA } from '../../src/domain/search-attributes';
import { addConnectionOptions, withSession, type ConnectionFlags } from '../connect';
import { renderTable } from '../format';
import { buildListQuery, filterWarnings, KNOWN_STATUSES, KNOWN_STOP_REASONS, type ListFilters } from '../list-query';
import { parsePositiveInt, parsePrincipal, parseStrategy, parseTenant } from '../parse';
import { arg, configureCommand, printJson, runAction, type CommandIO } from './shared';

interface ListFlags extends ConnectionFlags {
  readonly status?: string;
  readonly principal?: string;
  readonly tenant?: string;
  readonly strategy?: string;
  readonly stopReason?: string;
  readonly unknown: boolean;
  readonly pendingApprovals: boolean;
  readonly leftStanding: boolean;
  readonly limit: number;
  readonly json: boolean;
  readonly query: boolean;
}

/** One listed run, as `--json` prints it. */
export interface RunRow {
  readonly workflowId: string;
  readonly runId: string;
  /** Temporal's execution status (RUNNING, COMPLETED, ...). */
  readonly execution: string;
  /** LedgerloopStatus: the run's own status. */
  readonly status?: string;
  readonly principal?: string;
  readonly tenant?: string;
  readonly strategy?: string;
  readonly stopReason?: string;
  readonly unknownCalls?: number;
  readonly pendingApprovals?: number;
  /** LedgerloopLeftStanding: the effects the run's stop left standing for an operator (its stop event's field). */
  readonly leftStanding?: number;
  readonly startTime: string;
  readonly closeTime?: string;
  readonly taskQueue: string;
}

export function toRow(w: WorkflowExecutionInfo): RunRow {
  const sa = w.typedSearchAttributes;
  const opt = <T>(k: string, v: T | undefined): Record<string, T> => (v === undefined ? {} : { [k]: v });
  return {
    workflowId: w.workflowId,
    runId: w.runId,
    execution: w.status.name,
    ...opt('status', sa.get(SA.status)),
    ...opt('principal', sa.get(SA.principal)),
    ...opt('tenant', sa.get(SA.tenant)),
    ...opt('strategy', sa.get(SA.strategy)),
    ...opt('stopReason', sa.get(SA.stopReason)),
    ...opt('unknownCalls', sa.get(SA.unknownCalls)),
    ...opt('pendingApprovals', sa.get(SA.pendingApprovals)),
    ...opt('leftStanding', sa.get(SA.leftStanding)),
    startTime: w.startTime.toISOString(),
    ...opt('closeTime', w.closeTime?.toISOString()),
    taskQueue: w.taskQueue,
  };
}

export function registerList(program: Command, io: CommandIO): void {
  const cmd = program
    .command('list')
    .description('list agent runs (newest first) through the visibility API, filtered by search attributes')
    .option('--status <status>', `LedgerloopStatus (${KNOWN_STATUSES.join(', ')})`)
    .option(
      '--principal <kind:name>',
      'LedgerloopPrincipal, e.g. user:alice',
      arg((v) => parsePrincipal(v)),
    )
    .option('--tenant <id>', 'LedgerloopTenant', arg(parseTenant))
    .option('--strategy <name>', `LedgerloopStrategy (${strategyNames().join(', ')})`, arg(parseStrategy))
    .option('--stop-reason <reason>', `LedgerloopStopReason (${KNOWN_STOP_REASONS.join(', ')})`)
    .option('--unknown', 'only runs with UNKNOWN calls (LedgerloopUnknownCalls > 0)', false)
    .option('--pending-approvals', 'only runs waiting for an approval (LedgerloopPendingApprovals > 0)', false)
    .option(
      '--left-standing',
      'only stopped runs that left effects standing for an operator (LedgerloopLeftStanding > 0)',
      false,
    )
    .option(
      '--limit <n>',
      'at most this many runs',
      arg((v) => parsePositiveInt(v, '--limit')),
      20,
    )
    .option('--query', 'print the visibility query that would be sent, and do nothing else', false)
    .option('--json', 'print a JSON array of runs', false);
  addConnectionOptions(cmd);
  configureCommand(cmd, io);
  cmd.action((flags: ListFlags) =>
    runAction(cmd, io, async () => {
      const filters: ListFilters = {
        ...(flags.status !== undefined ? { status: flags.status } : {}),
        ...(flags.principal !== undefined ? { principal: flags.principal } : {}),
        ...(flags.tenant !== undefined ? { tenant: flags.tenant } : {}),
        ...(flags.strategy !== undefined ? { strategy: flags.strategy } : {}),
        ...(flags.stopReason !== undefined ? { stopReason: flags.stopReason } : {}),
        unknown: flags.unknown,
        pendingApprovals: flags.pendingApprovals,
        leftStanding: flags.leftStanding,
      };
      const query = buildListQuery(filters);
      if (flags.query) {
        io.out(`${query}\n`);
        return 0;
      }
      for (const w of filterWarnings(filters)) io.err.write(`${w}\n`);
      return withSession(flags, undefined, async (s) => {
        const rows: RunRow[] = [];
        for await (const w of s.client.workflow.list({ query, pageSize: Math.min(flags.limit, 100) })) {
          rows.push(toRow(w));
          if (rows.length >= flags.limit) break;
        }
        if (flags.json) {
          printJson(io, rows);
          return 0;
        }
        if (rows.length === 0) {
          io.out(`no runs match: ${query}\n`);
          return 0;
        }
        const table = renderTable(
          [
            'WORKFLOW ID',
            'EXECUTION',
            'STATUS',
            'PRINCIPAL',
            'TENANT',
            'STRATEGY',
            'STOP REASON',
            'UNKNOWN',
            'APPROVALS',
            'LEFT',
            'STARTED',
          ],
          rows.map((r) => [
            r.workflowId,
            r.execution,
            r.status ?? '',
            r.principal ?? '',
            r.tenant ?? '',
            r.strategy ?? '',
            r.stopReason ?? '',
            r.unknownCalls !== undefined ? String(r.unknownCalls) : '',
            r.pendingApprovals !== undefined ? String(r.pendingApprovals) : '',
            r.leftStanding !== undefined ? String(r.leftStanding) : '',
            r.startTime,
          ]),
        );
        io.out(`${table}\n`);
        return 0;
      });
    }),
  );
}
