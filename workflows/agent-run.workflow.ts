/**
 * The agent-run workflow: plan, validate, key, authorize, record intent, dispatch, settle, next turn; until the
 * model says done, a budget ends the run, or the deadline passes. The model only proposes; this code decides.
 */
import {
  allHandlersFinished,
  condition,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DeadlineTooClose, modelCallPreset, type DeadlineClock } from '../src/domain/activity-presets';
import type { Observation, PlanResponse } from '../src/domain/activity-contracts';
import { Failure } from '../src/domain/failures';
import { pendingApprovals, unknownCalls, REDUCER_VERSION } from '../src/domain/reducer';
import {
  DEFAULT_BUDGETS,
  DEFAULT_CAPS,
  DEFAULT_LIMITS,
  type AgentRunInput,
  type AgentRunResult,
  type StopReason,
} from '../src/domain/run';
import { SA } from '../src/server/search-attributes';
import { builtinTools } from '../src/tools/registry';
import { Approvals } from './approvals';
import type { DispatchGate } from './authorize';
import { runCall } from './call-runner';
import { ledgerQuery, resolveCallUpdate } from './definitions';
import { Ledger } from './ledger';
import { prepareProposal, type RunContext } from './proposals';

export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  const runId = workflowInfo().workflowId;
  const ledger = new Ledger();
  const limits = { ...DEFAULT_LIMITS, ...input.limits };
  const caps = { ...DEFAULT_CAPS, ...input.caps };
  const budgets = { ...DEFAULT_BUDGETS, ...input.budgets };
  const deadlineAtMs = Date.parse(input.deadlineAt);
  const clock = (): DeadlineClock => ({ deadlineAtMs, nowMs: Date.now(), caps, limits });
  const ctx: RunContext = {
    runId,
    principalId: input.principal.id,
    tenant: input.principal.tenant,
    deadlineAt: input.deadlineAt,
    tools: builtinTools,
    ledger,
    occurrences: new Map(),
  };

  setHandler(ledgerQuery, (upTo?: number) => ledger.snapshot(upTo));
  const approvals = new Approvals(ledger, () => publish());
  const gate: DispatchGate = {
    ledger,
    approvals,
    runId,
    principalId: input.principal.id,
    tenant: input.principal.tenant,
    deadlineAt: input.deadlineAt,
    strategy: input.strategy,
    clock,
    dispatchTimes: new Map(),
    unresolved: (except) => unknownCalls(ledger.projection).filter((c) => c !== except),
    budgetLeft: () => ledger.projection.intents < budgets.maxToolCalls,
  };
  setHandler(
    resolveCallUpdate,
    (res) => {
      ledger.append({
        type: 'ToolEffectReconciled',
        logicalCallId: res.logicalCallId,
        via: 'operator',
        outcome: res.outcome,
        ...(res.receipt !== undefined ? { receipt: res.receipt } : {}),
        detail: `${res.operator}: ${res.reason}`,
      });
      publish();
      return { accepted: true as const };
    },
    {
      validator: (res) => {
        if (ledger.projection.calls[res.logicalCallId]?.state !== 'UNKNOWN') {
          throw new Error(`call ${res.logicalCallId} is not UNKNOWN`);
        }
        if (!res.operator || !res.reason) throw new Error('an operator resolution needs who and why');
      },
    },
  );

  function publish(): void {
    const p = ledger.projection;
    const open = unknownCalls(p);
    upsertSearchAttributes([
      { key: SA.status, value: p.status },
      { key: SA.unknownCalls, value: open.length },
      { key: SA.pendingApprovals, value: pendingApprovals(p).length },
      ...(p.stopReason ? [{ key: SA.stopReason, value: p.stopReason }] : []),
    ]);
    const rows = Object.values(p.calls).map((c) => `| ${c.logicalCallId} | ${c.toolName} | ${c.state} | ${c.receipt ?? ''} |`);
    setCurrentDetails(
      [`**${p.status}** · turn ${p.turns}/${budgets.maxTurns} · intents ${p.intents}/${budgets.maxToolCalls}`, '', '| call | tool | state | receipt |', '|---|---|---|---|', ...rows].join('\n'),
    );
  }

  async function stop(stopReason: StopReason, detail: string, finalText?: string): Promise<AgentRunResult> {
    ledger.append({ type: 'RunCompleted', stopReason, detail });
    publish();
    await condition(allHandlersFinished);
    const snap = ledger.snapshot();
    return {
      stopReason,
      detail,
      ...(finalText !== undefined ? { finalText } : {}),
      projectionHash: snap.projectionHash,
      eventCount: snap.eventCount,
      calls: Object.values(snap.projection.calls).map((c) => ({
        logicalCallId: c.logicalCallId,
        toolName: c.toolName,
        state: c.state,
        ...(c.operationKey ? { operationKey: c.operationKey } : {}),
        ...(c.receipt ? { receipt: c.receipt } : {}),
      })),
    };
  }

  ledger.append({
    type: 'RunCreated',
    runId,
    principalId: input.principal.id,
    tenant: input.principal.tenant,
    strategy: input.strategy,
    deadlineAt: input.deadlineAt,
    budgets,
    reducerVersion: REDUCER_VERSION,
  });
  upsertSearchAttributes([
    { key: SA.principal, value: input.principal.id },
    { key: SA.tenant, value: input.principal.tenant },
    { key: SA.strategy, value: input.strategy },
  ]);
  publish();

  let observations: Observation[] = [];
  for (let turn = 1; ; turn++) {
    if (turn > budgets.maxTurns) return stop('budget_exhausted', `turns: ${budgets.maxTurns} used`);
    let plan: PlanResponse;
    try {
      const { planTurn } = proxyActivities<Activities>(modelCallPreset(clock(), `plan turn ${turn}`));
      ledger.append({ type: 'ModelRequestStarted', turn });
      plan = await planTurn({ runId, turn, goal: input.goal, planner: input.planner, observations });
    } catch (err) {
      if (err instanceof DeadlineTooClose) return stop('deadline_exceeded', err.message);
      return stop('model_failed', (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message);
    }
    const proposals = plan.kind === 'proposals' ? plan.proposals : [];
    ledger.append({ type: 'ModelResponseRecorded', turn, proposals: proposals.length, final: plan.kind === 'final', attempt: plan.attempt });
    if (plan.kind === 'final') return stop('completed', `the model finished after ${turn} turn(s)`, plan.text);

    const perTurn = new Map<string, number>();
    const prepared = proposals.map((p) => prepareProposal(ctx, turn, p, perTurn));
    publish();
    let results: Observation[];
    try {
      // Parallel calls run side by side; each is tracked by its logical call id, never by position.
      results = await Promise.all(
        prepared.map((p) => (p.ok ? runCall({ ledger, strategy: input.strategy, tenant: ctx.tenant, clock, gate }, p.call) : Promise.resolve(p.observation))),
      );
    } catch (err) {
      if (err instanceof DeadlineTooClose) return stop('deadline_exceeded', err.message);
      throw err;
    }
    publish();

    const open = unknownCalls(ledger.projection);
    if (open.length > 0) {
      ledger.append({ type: 'OperatorWaitStarted', unknownCalls: open });
      publish();
      const settled = await condition(() => unknownCalls(ledger.projection).length === 0, Math.max(0, deadlineAtMs - Date.now()));
      if (!settled) return stop('outcome_unknown', `calls still UNKNOWN at the deadline: ${open.join(', ')}`);
      // Operator decisions replace the UNKNOWN observations.
      results = results.map((o) => {
        const c = ledger.projection.calls[o.logicalCallId];
        return o.state === 'UNKNOWN' && c ? { ...o, state: c.state === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED' } : o;
      });
    }
    observations = results;
    if (results.some((o) => o.error?.code === Failure.BudgetToolCalls)) {
      return stop('budget_exhausted', `tool calls: ${budgets.maxToolCalls} used`);
    }
  }
}
