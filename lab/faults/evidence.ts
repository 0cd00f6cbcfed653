/**
 * After a case: read every metric from a durable record. The history is fetched from the server; the ledger is
 * rebuilt by a NEW in-process worker (no cache) that replays that history to answer `ledger(upTo)`; the same
 * history goes through Worker.runReplayHistory (a determinism check: it compares commands, not results); the
 * downstream counts come from the services' own databases.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { connectNative, serverTarget } from '../../host/server/connection-config';
import { attemptCount } from '../../host/client/history-metrics';
import type { AgentRunResult, RetryStrategy } from '../../src/domain/run';
import type { CallView } from '../../src/domain/reducer';
import { ledgerQuery } from '../../workflows/definitions';
import type { LedgerSnapshot } from '../../workflows/ledger';
import { FAULT_SINKS } from './crash-points';
import type { LedgerMark } from './workflows/hook';
import { checkInvariants, type EffectRow, type InvariantViolation, type RequestEntry } from './explore-invariants';
import { readEffectLog, readRequestEntries } from './explore-records';
import { leftStandingOf } from './writeup';
import type { CaseServices, Lab, ServerLink } from './lab';
import type { CaseMetrics } from './metrics';
import type { PhaseClock } from './phases';
import {
  mergeSummaries,
  readRefusalCounts,
  readRequestLog,
  summarizeRequests,
  withRefusals,
  type RequestLogSummary,
} from './request-log';

export interface CallRow {
  readonly logicalCallId: string;
  readonly toolName: string;
  readonly state: string;
  readonly operationKey: string | null;
  readonly attempts: number;
  readonly errorCode: string | null;
  readonly reconciledVia: string | null;
  readonly receipt: string | null;
  readonly origin: string;
}

export interface Evidence {
  readonly metrics: CaseMetrics;
  readonly calls: readonly CallRow[];
  readonly requestLog: RequestLogSummary;
  /** The explorer's universal invariants checked on this run's records (explore-invariants.ts). */
  readonly invariants: readonly InvariantViolation[];
  readonly replayError?: string;
  /** The ledger as the new worker rebuilt it (the write-up reads its events). */
  readonly rebuilt?: LedgerSnapshot;
  /** Why a first new worker could not rebuild it, when a second one was needed. */
  readonly rebuildRetried?: string;
  readonly historyEvents: number;
}

export interface EvidenceInput {
  readonly lab: Lab;
  readonly link: ServerLink;
  readonly taskQueue: string;
  readonly handle: WorkflowHandle;
  readonly services: CaseServices;
  readonly before?: LedgerMark;
  readonly result?: AgentRunResult;
  readonly completed: boolean;
  readonly faultsFired: number;
  /**
   * Calls of the faulted MCP tools that reached their servers (the harness's `calls.log`): an MCP server keeps no
   * request log, so each counts as one dispatch and one effect (a write reached the server once per call).
   */
  readonly mcpCalls?: number;
  readonly probeOutcome: string;
  /** The run's retry strategy (the at-most-one-effect invariants hold under the safe ones only). */
  readonly strategy?: RetryStrategy;
  /** Where the evidence's time goes (history, replay, rebuild, records), when the caller measures. */
  readonly phases?: PhaseClock;
}

/** The ledger, first `upTo` events and all of them, as a brand-new worker rebuilds it from the history. */
async function rebuildOnNewWorker(
  input: EvidenceInput,
  upTo: number | undefined,
): Promise<[LedgerSnapshot | undefined, LedgerSnapshot]> {
  // The lab's own connection on the shared server; a case with a server of its own connects to that one.
  const shared = input.link.server === input.lab.shared.server;
  const connection = shared ? input.lab.native : (await connectNative(serverTarget(input.link.server))).connection;
  try {
    const worker = await Worker.create({
      connection,
      namespace: input.link.server.namespace,
      taskQueue: input.taskQueue,
      identity: `ledgerloop-faults-verifier@${process.pid}`,
      workflowBundle: { codePath: input.lab.bundlePath },
      maxCachedWorkflows: 0,
      sinks: FAULT_SINKS,
      ...(input.lab.dataConverter ? { dataConverter: input.lab.dataConverter } : {}),
    });
    return await worker.runUntil(async () => {
      const deadline =
        (ms: number) =>
        <T>(fn: () => Promise<T>) =>
          input.link.connection.withDeadline(Date.now() + ms, fn);
      const full = await deadline(30_000)(() => input.handle.query(ledgerQuery));
      if (upTo === undefined) return [full, full] as [LedgerSnapshot, LedgerSnapshot];
      // `ledger(n)` counts this run's own events; a continued run's sequence numbers start after what it carried.
      const carried = full.events.find((e) => e.type === 'LedgerCarriedForward');
      const base = carried?.type === 'LedgerCarriedForward' ? carried.eventCount : 0;
      // The hash before the fault was taken in an earlier run of the chain: this run cannot answer for it. (A run
      // that carried nothing answers even for 0 events: a kill in its first ledger-writing task leaves it empty.)
      if (base > 0 && upTo <= base) return [undefined, full] as [LedgerSnapshot | undefined, LedgerSnapshot];
      const partial = await deadline(30_000)(() => input.handle.query(ledgerQuery, upTo - base));
      return [partial, full] as [LedgerSnapshot, LedgerSnapshot];
    });
  } finally {
    if (!shared) await connection.close();
  }
}

/** A call of the projection as the evidence's call table shows it. */
export function callRow(c: CallView): CallRow {
  const origin = (c as { origin?: string }).origin ?? 'model';
  return {
    logicalCallId: c.logicalCallId,
    toolName: c.toolName,
    state: c.state,
    operationKey: c.operationKey,
    attempts: c.attempts,
    errorCode: c.errorCode,
    reconciledVia: c.reconciledVia,
    receipt: c.receipt,
    origin,
  };
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

/** Collects the case's metrics. Throws only when the server itself cannot be read. */
export async function collectEvidence(input: EvidenceInput): Promise<Evidence> {
  const workflowId = input.handle.workflowId;
  const t0 = Date.now();
  const phase = (name: string, since: number): void => input.phases?.add(name, Date.now() - since);
  const history = await input.handle.fetchHistory();
  phase('evidence.history', t0);
  const t1 = Date.now();
  let replayError: string | undefined;
  try {
    await Worker.runReplayHistory(
      {
        workflowBundle: { codePath: input.lab.bundlePath },
        ...(input.lab.dataConverter ? { dataConverter: input.lab.dataConverter } : {}),
      },
      history,
      workflowId,
    );
  } catch (err) {
    replayError = `${(err as Error).name}: ${(err as Error).message}`;
  }

  phase('evidence.replay', t1);
  const t2 = Date.now();
  let rebuilt: LedgerSnapshot | undefined;
  let after: LedgerSnapshot | undefined;
  let comparable = true;
  // A second new worker when the first could not answer (on a loaded machine a query once waited out its 30 s
  // deadline for a poll): a run that cannot be rebuilt fails both, and the first failure is kept in the timeline.
  let rebuildRetried: string | undefined;
  for (let attempt = 1; attempt <= 2 && rebuilt === undefined; attempt++) {
    try {
      [after, rebuilt] = await rebuildOnNewWorker(input, input.before?.eventCount);
      if (after === undefined) {
        comparable = false; // measured before a continue-as-new: only the final run's own hash is checked
        after = rebuilt;
      }
    } catch (err) {
      if (attempt === 1) rebuildRetried = (err as Error).message;
      else replayError ??= `the new worker could not rebuild the ledger: ${(err as Error).message}`;
    }
  }

  phase('evidence.rebuild', t2);
  const t3 = Date.now();
  let dispatches = 0;
  let effects = 0;
  const logs: RequestLogSummary[] = [];
  const effectRows: EffectRow[] = [];
  const requestRows: RequestEntry[] = [];
  for (const svc of input.services.byName.values()) {
    const s = await svc.client.stats('', { prefix: true });
    dispatches += s.dispatchCount;
    effects += s.businessEffectCount;
    logs.push(withRefusals(summarizeRequests(readRequestLog(svc.dbPath)), readRefusalCounts(svc.dbPath)));
    effectRows.push(...readEffectLog(svc.dbPath, svc.name));
    requestRows.push(...readRequestEntries(svc.dbPath, svc.name));
  }
  dispatches += input.mcpCalls ?? 0;
  effects += input.mcpCalls ?? 0;
  const requestLog = mergeSummaries(logs);
  phase('evidence.records', t3);

  const calls = rebuilt ? Object.values(rebuilt.projection.calls).map(callRow) : [];
  const first = calls[0];
  const logical = calls.filter((c) => rebuilt?.projection.calls[c.logicalCallId]?.intentRecorded).length;
  const attempts = attemptCount(history, 'dispatchTool');
  const compensations = (rebuilt?.events ?? []).flatMap((e) => (e.type === 'CompensationCompleted' ? [e.outcome] : []));
  const before = comparable ? (input.before?.projectionHash ?? '') : '';
  const afterHash = after?.projectionHash ?? '';
  const invariants = checkInvariants({
    strategy: input.strategy ?? 'same_key_replay',
    events: rebuilt?.events ?? [],
    ...(rebuilt ? { projection: rebuilt.projection } : {}),
    effects: effectRows,
    requests: requestRows,
    hashBefore: before,
    hashAfter: afterHash,
    ...(replayError !== undefined ? { replayError } : {}),
    completed: input.completed,
  });
  const metrics: CaseMetrics = {
    attempt_count: attempts,
    logical_call_count: logical,
    proposal_count: rebuilt ? rebuilt.events.filter((e) => e.type === 'ToolProposalRecorded').length : 0,
    retry_amplification: logical > 0 ? round2(attempts / logical) : 0,
    dispatch_count: dispatches,
    business_effect_count: effects,
    refused_dispatch_count: requestLog.refused,
    stale_dispatch_count: requestLog.staleAdmitted,
    mismatched_dispatch_count: requestLog.mismatchedAdmitted,
    projection_hash_before: before,
    projection_hash_after: afterHash,
    projection_hash_stable: before !== '' && before === afterHash,
    replay_ok: replayError === undefined,
    final_state: first?.state ?? 'NONE',
    final_states: calls.map((c) => c.state).join(','),
    error_code: first?.errorCode ?? '',
    unknown_call_count: calls.filter((c) => c.state === 'UNKNOWN').length,
    left_standing_count: leftStandingOf(rebuilt?.events ?? [])?.length ?? 0,
    violation_count: rebuilt?.projection.violations.length ?? 0,
    offset_count: compensations.filter((o) => o === 'OFFSET').length,
    unsettled_compensation_count: compensations.filter((o) => o === 'FAILED' || o === 'UNKNOWN').length,
    stop_reason: input.result?.stopReason ?? rebuilt?.projection.stopReason ?? '',
    cancel_recorded: (rebuilt?.events ?? []).some((e) => e.type === 'CancellationRequested'),
    completed: input.completed,
    faults_fired: input.faultsFired,
    probe_outcome: input.probeOutcome,
    invariant_violations: invariants.length,
  };
  return {
    metrics,
    calls,
    requestLog,
    invariants,
    ...(replayError !== undefined ? { replayError } : {}),
    ...(rebuilt ? { rebuilt } : {}),
    ...(rebuildRetried !== undefined ? { rebuildRetried } : {}),
    historyEvents: history.events?.length ?? 0,
  };
}
