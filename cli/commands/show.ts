/** `ledgerloop show`: a run's ledger events (one line each), call states, projection hash and pending approvals. */
import type { Command } from 'commander';
import { addConnectionOptions, addTimeoutOption, withSession, type ConnectionFlags } from '../connect';
import { callsTable, eventLine, renderTable } from '../format';
import { parsePositiveInt } from '../parse';
import { readRun, type RunView } from './read-run';
import { arg, configureCommand, printJson, runAction, runCommand, type CommandIO } from './shared';

interface ShowFlags extends ConnectionFlags {
  readonly json: boolean;
  readonly upTo?: number;
  readonly timeout: number;
}

/** What `show --json` prints. */
export function showJson(workflowId: string, v: RunView): unknown {
  const p = v.ledger.projection;
  return {
    workflowId,
    runId: v.description.runId,
    execution: v.description.status.name,
    taskQueue: v.description.taskQueue,
    reducerVersion: v.ledger.reducerVersion,
    projectionHash: v.ledger.projectionHash,
    eventCount: v.ledger.eventCount,
    status: p.status,
    stopReason: p.stopReason,
    principal: p.principalId,
    tenant: p.tenant,
    turns: p.turns,
    intents: p.intents,
    events: v.ledger.events,
    calls: Object.values(p.calls),
    pendingApprovals: v.pending,
    // What the stop left standing for an operator: the stop event's structured field, never parsed from its prose.
    leftStanding: p.leftStanding,
    violations: p.violations,
  };
}

/** The human rendering of `show`. */
export function showText(workflowId: string, v: RunView): string {
  const p = v.ledger.projection;
  const d = v.description;
  const lines = [
    `run        ${workflowId} (run ${d.runId})`,
    `execution  ${d.status.name} on task queue ${d.taskQueue}`,
    `status     ${p.status}${p.stopReason ? ` (${p.stopReason})` : ''} · principal ${p.principalId ?? '?'} · tenant ${p.tenant ?? '?'} · turns ${p.turns} · intents ${p.intents}`,
    `ledger     ${v.ledger.eventCount} events · reducer v${v.ledger.reducerVersion} · projection hash ${v.ledger.projectionHash}`,
    '',
    'events',
    ...v.ledger.events.map((e) => `  ${eventLine(e)}`),
    '',
  ];
  const calls = Object.values(p.calls);
  lines.push(calls.length > 0 ? `calls\n${indent(callsTable(calls))}` : 'calls: none', '');
  if (v.pending.length > 0) {
    const rows = v.pending.map((a) => [
      a.logicalCallId,
      a.toolName,
      a.summary,
      a.argumentsHash,
      a.policyVersion,
      a.reason,
    ]);
    lines.push(
      `pending approvals\n${indent(renderTable(['CALL', 'TOOL', 'SUMMARY', 'ARGUMENTS HASH', 'POLICY', 'WHY'], rows))}`,
    );
  } else {
    lines.push('pending approvals: none');
  }
  lines.push(leftStandingText(p));
  lines.push(
    p.violations.length > 0 ? `violations\n${p.violations.map((x) => `  ${x}`).join('\n')}` : 'violations: none',
  );
  return `${lines.join('\n')}\n`;
}

/** What the run's stop left standing for an operator, from the projection's `leftStanding` (RunCompleted's field). */
export function leftStandingText(p: Pick<RunView['ledger']['projection'], 'status' | 'leftStanding'>): string {
  if (p.leftStanding.length === 0)
    return p.status === 'stopped' ? 'left standing: nothing' : 'left standing: (the run has not stopped)';
  const rows = p.leftStanding.map((l) => [l.logicalCallId, l.toolName, l.state, l.operationKey, l.why]);
  return `left standing for an operator\n${indent(renderTable(['CALL', 'TOOL', 'STATE', 'OPERATION KEY', 'WHY'], rows))}`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

export function registerShow(program: Command, io: CommandIO): void {
  const cmd = runCommand(
    program,
    'show',
    'show a run: ledger events, call states, projection hash and reducer version, pending approvals',
  )
    .option(
      '--up-to <n>',
      'the ledger and projection as of its first n events',
      arg((v) => parsePositiveInt(v, '--up-to', 1_000_000)),
    )
    .option('--json', 'print one JSON document', false);
  addTimeoutOption(cmd, 'the ledger query');
  addConnectionOptions(cmd);
  configureCommand(cmd, io);
  cmd.action((workflowId: string, flags: ShowFlags) =>
    runAction(cmd, io, () =>
      withSession(flags, workflowId, async (s) => {
        const view = await readRun(s, workflowId, flags.timeout, flags.upTo);
        if (flags.json) printJson(io, showJson(workflowId, view));
        else io.out(showText(workflowId, view));
        return 0;
      }),
    ),
  );
}
