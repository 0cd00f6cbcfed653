/**
 * The agent-run workflow: plan, validate, key, authorize, record intent, dispatch, settle, next turn; until the
 * model says done, a budget or the deadline ends the run, a failed effect is compensated, or an operator stops
 * it. The model only proposes; this code decides.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DeadlineTooClose, modelCallPreset, type DeadlineClock } from '../src/domain/activity-presets';
import type { Observation, PlanResponse } from '../src/domain/activity-contracts';
import { Failure } from '../src/domain/failures';
import { retryAmplification, unknownCalls, REDUCER_VERSION, type Projection } from '../src/domain/reducer';
import {
  DEFAULT_BUDGETS,
  DEFAULT_CAPS,
  DEFAULT_LIMITS,
  DEFAULT_PRICES,
  type AgentRunInput,
  type AgentRunResult,
  type CarriedState,
  type StopReason,
} from '../src/domain/run';
import { costMicros, proposalSignature, spentBudget } from './budgets';
import { builtinTools } from '../src/tools/registry';
import { Approvals } from './approvals';
import { PolicyHolder, type DispatchGate } from './authorize';
import { runCall, type CallRunnerContext } from './call-runner';
import { ledgerQuery, retryAccountingQuery } from './definitions';
import { Ledger } from './ledger';
import { handleCancelRequests, handleOperatorResolutions } from './operator';
import { VERIFIED_IDENTITY, verifyRunIdentity } from './identity';
import { answerRepeat, earlierIntent, prepareProposal, type RunContext, type ValidatedCall } from './proposals';
import { RunView, runResult } from './run-view';
import { Saga, type SagaRegistration } from './saga';
import { CircuitBreakers } from './circuit-breaker';

/** Patch id: search attributes are upserted only when a value changes (fewer history events per turn). */
export const PUBLISH_ON_CHANGE = 'publish-on-change';
/** Patch id: the run decides from the policy the authorizer returned; the dispatch activity re-checks and signs. */
export const DECIDE_FROM_HELD_POLICY = 'decide-from-held-policy';
/** Patch id: a stop other than `completed` settles standing effects by the run's `onAbort` choice. */
export const SETTLE_STANDING_EFFECTS = 'settle-standing-effects';

export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  const runId = workflowInfo().workflowId;
  const carried = input.carried;
  const ledger = new Ledger(
    carried ? { projection: carried.projection as Projection, eventCount: carried.eventCount } : undefined,
  );
  const limits = { ...DEFAULT_LIMITS, ...input.limits };
  const caps = { ...DEFAULT_CAPS, ...input.caps };
  const budgets = { ...DEFAULT_BUDGETS, ...input.budgets };
  const deadlineAtMs = Date.parse(input.deadlineAt);
  const clock = (): DeadlineClock => ({ deadlineAtMs, nowMs: Date.now(), caps, limits });
  const who = { principalId: input.principal.id, tenant: input.principal.tenant };
  const ctx: RunContext = {
    runId,
    ...who,
    deadlineAt: input.deadlineAt,
    tools: builtinTools,
    ledger,
    occurrences: new Map(carried?.occurrences ?? []),
  };
  // Versioned change: runs started before it upserted every search attribute on every publish (replayed as such).
  const view = new RunView(ledger, budgets, patched(PUBLISH_ON_CHANGE));
  const show = (): void => view.publish();

  setHandler(ledgerQuery, (upTo?: number) => ledger.snapshot(upTo));
  setHandler(retryAccountingQuery, () => ({
    dependencies: ledger.projection.dependencies,
    amplification: retryAmplification(ledger.projection),
    circuits: ledger.projection.circuits,
  }));
  /** The policy the run decides from now (held), for the checks on approvers, operators and cancellers. */
  const heldPolicy = () => gate.held?.current?.document;
  handleOperatorResolutions(ledger, show, heldPolicy);
  /** Cancelling this scope (`requestCancel`, or Temporal's cancel of the run) stops the turn loop. */
  const mainScope = new CancellationScope();
  const cancelledBy = handleCancelRequests(ledger, mainScope, heldPolicy, who);
  const saga = new Saga(ledger, builtinTools, runId, who);
  // Compensations are owed across continue-as-new: the registrations travel with the carried state.
  const lostRegistrations = carried?.saga ? saga.restore(carried.saga as SagaRegistration[]) : [];
  const onAbort = input.onAbort ?? 'compensate';
  const breakers = new CircuitBreakers(ledger);
  /** Calls holding a place in the tool-call budget while they wait (authorizer, approval, rate limit). */
  const reservedIntents = new Set<string>();
  const gate: DispatchGate = {
    ledger,
    approvals: new Approvals(ledger, show, who),
    runId,
    ...who,
    deadlineAt: input.deadlineAt,
    strategy: input.strategy,
    clock,
    dispatchTimes: new Map(),
    unresolved: (except) => unknownCalls(ledger.projection).filter((c) => c !== except),
    reserveBudget: (callId) => {
      if (reservedIntents.has(callId)) return true;
      if (ledger.projection.intents + reservedIntents.size >= budgets.maxToolCalls) return false;
      reservedIntents.add(callId);
      return true;
    },
    releaseBudget: (callId) => void reservedIntents.delete(callId),
    circuitOpen: (service) => breakers.openReason(service),
    // Versioned change: runs started before it asked the authorizer local activity for every call.
    ...(patched(DECIDE_FROM_HELD_POLICY) ? { held: new PolicyHolder() } : {}),
  };
  const runner: CallRunnerContext = {
    ledger,
    strategy: input.strategy,
    tenant: who.tenant,
    clock,
    gate,
    breakers,
    beforeDispatch: (c) => saga.register(c),
  };
  // Offsetting at a stop may use the grace past the deadline: that is what the grace is kept for.
  const abortRunner: CallRunnerContext = {
    ...runner,
    clock: () => ({ ...clock(), deadlineAtMs: deadlineAtMs + caps.abortGraceMs }),
  };

  /**
   * A stop other than `completed`: every forward effect still standing is offset (`onAbort: 'compensate'`) or
   * left for an operator (`'leave'`, no compensation declared, or no time left). Returns what the stop detail
   * must name, or '' when nothing stands.
   */
  async function settleStanding(reason: StopReason): Promise<string> {
    const standing = Object.values(ledger.projection.calls).filter(
      (c) =>
        c.origin === 'model' &&
        c.intentRecorded &&
        (c.state === 'SUCCEEDED' || c.state === 'UNKNOWN') &&
        c.compensation !== 'OFFSET' &&
        c.compensation !== 'NOTHING_TO_OFFSET' &&
        builtinTools.get(c.toolName)?.compensation.kind !== 'none',
    );
    if (standing.length === 0 || !patched(SETTLE_STANDING_EFFECTS)) return '';
    const out = { offset: [] as string[], nothingToOffset: [] as string[], unsettled: [] as string[] };
    if (onAbort === 'compensate' && standing.some((c) => saga.covers(c.logicalCallId))) {
      try {
        const done = await saga.compensate(ledger.projection.turns, `run stopping: ${reason}`, (c) =>
          runCall(abortRunner, c),
        );
        out.offset.push(...done.offset);
        out.nothingToOffset.push(...done.nothingToOffset);
        out.unsettled.push(...done.unsettled);
      } catch (err) {
        if (!(err instanceof DeadlineTooClose)) throw err;
      }
    }
    const handled = new Set([...out.offset, ...out.nothingToOffset]);
    const left = standing.map((c) => c.logicalCallId).filter((id) => !handled.has(id) && !out.unsettled.includes(id));
    ledger.append({ type: 'StandingEffectsSettled', stopReason: reason, choice: onAbort, ...out, left });
    const parts = [
      out.offset.length > 0 ? `offset ${out.offset.join(', ')}` : '',
      out.nothingToOffset.length > 0 ? `nothing to offset for ${out.nothingToOffset.join(', ')}` : '',
      out.unsettled.length > 0 ? `compensation did not settle for ${out.unsettled.join(', ')}` : '',
      left.length > 0
        ? `left standing for an operator: ${left.map((id) => `${id} (${ledger.projection.calls[id]?.toolName ?? '?'})`).join(', ')}`
        : '',
    ].filter((x) => x !== '');
    return `standing effects (onAbort: ${onAbort}): ${parts.join('; ')}`;
  }

  /** End the run: settle what stands, record why, publish, and return; never interrupted by a cancellation. */
  const stop = (reason: StopReason, detail: string, finalText?: string): Promise<AgentRunResult> =>
    CancellationScope.nonCancellable(async () => {
      const standing =
        reason === 'completed' || reason === 'tool_failed' || reason === 'compensation_failed'
          ? ''
          : await settleStanding(reason);
      const lost =
        lostRegistrations.length > 0
          ? `compensations lost across continue-as-new (unknown tool): ${lostRegistrations.join(', ')}`
          : '';
      const full = [detail, standing, reason === 'completed' ? '' : lost].filter((x) => x !== '').join('; ');
      ledger.append({ type: 'RunCompleted', stopReason: reason, detail: full });
      show();
      await condition(allHandlersFinished);
      return runResult(ledger, reason, full, finalText);
    });

  let refusedIdentity: string | undefined;
  if (carried) {
    // Carried state is the workflow's own, handed over at continue-as-new; a starter that sets it is refused.
    if (patched(VERIFIED_IDENTITY) && workflowInfo().continuedFromExecutionRunId === undefined) {
      throw ApplicationFailure.create({
        type: Failure.IdentityInvalid,
        nonRetryable: true,
        message: 'carried state is set only by continue-as-new; nothing was run',
      });
    }
    ledger.append({
      type: 'LedgerCarriedForward',
      fromTemporalRunId: carried.fromTemporalRunId,
      projectionHash: carried.projectionHash,
      eventCount: carried.eventCount,
    });
  } else {
    // Versioned change: runs started before it took the principal from the input text.
    const checked = patched(VERIFIED_IDENTITY)
      ? await verifyRunIdentity(input.identityToken, input.principal)
      : undefined;
    const identity =
      checked === undefined
        ? {}
        : checked.ok
          ? {
              identity: {
                verified: true as const,
                subject: checked.identity.subject,
                issuer: checked.identity.issuer,
                tokenDigest: checked.identity.tokenDigest,
                roles: checked.identity.roles,
              },
            }
          : { identity: { verified: false as const, code: checked.code, reason: checked.reason } };
    if (checked && !checked.ok) refusedIdentity = `${checked.code}: ${checked.reason}`;
    ledger.append({
      type: 'RunCreated',
      runId,
      ...who,
      strategy: input.strategy,
      deadlineAt: input.deadlineAt,
      budgets,
      reducerVersion: REDUCER_VERSION,
      onAbort,
      ...identity,
    });
  }
  view.identify({ principal: who.principalId, tenant: who.tenant, strategy: input.strategy });
  show();
  // No model call and no dispatch for a run whose identity did not verify.
  if (refusedIdentity !== undefined) return stop('authorization_denied', `identity refused (${refusedIdentity})`);

  /** Run one turn's calls side by side; each is tracked by its logical call id, never by position. */
  async function dispatchTurn(
    turn: number,
    plan: Extract<PlanResponse, { kind: 'proposals' }>,
  ): Promise<Observation[]> {
    const perTurn = new Map<string, number>();
    const cap = budgets.maxProposalsPerTurn;
    const prepared = plan.proposals.map((p, i) => prepareProposal(ctx, turn, p, perTurn, i >= cap ? cap : undefined));
    show();
    // One intent, one call: a proposal naming an intent already made (this turn or earlier) gets its outcome.
    const byKey = new Map<string, { readonly id: string; readonly outcome: Promise<Observation> }>();
    const run = (call: ValidatedCall): Promise<Observation> => {
      const sameTurn = byKey.get(call.operationKey);
      if (sameTurn) return sameTurn.outcome.then((o) => answerRepeat(ledger, call, sameTurn.id, o));
      const earlier = earlierIntent(ledger, call);
      if (earlier && earlier.state !== 'UNKNOWN') {
        const settledBefore: Observation = {
          logicalCallId: earlier.logicalCallId,
          providerCallId: '',
          toolName: call.tool.name,
          state: earlier.state === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED',
          ...(earlier.errorCode ? { error: { code: earlier.errorCode, message: earlier.errorCode } } : {}),
        };
        return Promise.resolve(answerRepeat(ledger, call, earlier.logicalCallId, settledBefore));
      }
      const outcome = runCall(runner, call);
      byKey.set(call.operationKey, { id: call.logicalCallId, outcome });
      return outcome;
    };
    const settled = await Promise.allSettled(
      prepared.map((p) => (p.ok ? run(p.call) : Promise.resolve(p.observation))),
    );
    const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (rejected) throw rejected.reason;
    show();
    return settled.map((s) => (s as PromiseFulfilledResult<Observation>).value);
  }

  /** A dispatched call failed downstream: offset what already took effect, then stop. */
  async function compensateAndStop(turn: number, failed: readonly Observation[]): Promise<AgentRunResult> {
    const why = failed.map((o) => `${o.toolName} ${o.error?.code ?? 'failed'}`).join(', ');
    const outcome = await saga.compensate(turn, why, (c) => runCall(runner, c));
    show();
    const summary = `offset ${outcome.offset.length}, nothing to offset ${outcome.nothingToOffset.length}`;
    if (outcome.unsettled.length > 0) {
      return stop(
        'compensation_failed',
        `${why}; ${summary}; compensation did not settle for ${outcome.unsettled.join(', ')}: an operator must repair`,
      );
    }
    return stop('tool_failed', `${why}; ${summary} (compensated, not rolled back)`);
  }

  let observations = (carried?.observations ?? []) as Observation[];
  let lastSignature = carried?.lastProposalSignature;
  let repeated = carried?.repeatedTurns ?? 0;
  try {
    return await mainScope.run(async (): Promise<AgentRunResult> => {
      for (let turn = carried?.nextTurn ?? 1; ; turn++) {
        if (turn > budgets.maxTurns) return await stop('budget_exhausted', `turns: ${budgets.maxTurns} used`);
        if (workflowInfo().historyLength > budgets.maxHistoryEvents || workflowInfo().continueAsNewSuggested) {
          // Carry the projection and the open work forward, never the transcript (the planner keeps it by reference).
          await condition(allHandlersFinished);
          const snap = ledger.snapshot();
          const next: CarriedState = {
            fromTemporalRunId: workflowInfo().runId,
            projection: snap.projection,
            projectionHash: snap.projectionHash,
            eventCount: snap.eventCount,
            nextTurn: turn,
            observations,
            occurrences: [...ctx.occurrences.entries()],
            ...(lastSignature !== undefined ? { lastProposalSignature: lastSignature } : {}),
            repeatedTurns: repeated,
            usage: { tokens: snap.projection.tokens, costMicros: snap.projection.costMicros },
            ...(saga.size > 0 ? { saga: saga.carried() } : {}),
          };
          // The identity token is not carried: the continued run starts from the verified projection.
          const { identityToken: _verifiedAtStart, ...rest } = input;
          return await continueAsNew<typeof agentRun>({ ...rest, carried: next });
        }
        let plan: PlanResponse;
        try {
          const { planTurn } = proxyActivities<Activities>(modelCallPreset(clock(), `plan turn ${turn}`));
          ledger.append({ type: 'ModelRequestStarted', turn });
          plan = await planTurn({ runId, turn, goal: input.goal, planner: input.planner, observations });
        } catch (err) {
          if (err instanceof DeadlineTooClose || isCancellation(err)) throw err;
          const cause =
            (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
          return await stop('model_failed', cause);
        }
        const proposals = plan.kind === 'proposals' ? plan.proposals : [];
        const usage = plan.usage
          ? { ...plan.usage, costMicros: costMicros(plan.usage, input.prices ?? DEFAULT_PRICES) }
          : undefined;
        ledger.append({
          type: 'ModelResponseRecorded',
          turn,
          proposals: proposals.length,
          final: plan.kind === 'final',
          attempt: plan.attempt,
          ...(usage ? { usage } : {}),
        });
        if (plan.kind === 'final')
          return await stop('completed', `the model finished after ${turn} turn(s)`, plan.text);
        const spent = spentBudget(ledger.projection, budgets);
        if (spent !== null) return await stop('budget_exhausted', spent);
        const signature = proposalSignature(proposals);
        repeated = signature === lastSignature ? repeated + 1 : 1;
        lastSignature = signature;
        if (repeated >= budgets.noProgressTurns) {
          return await stop('budget_exhausted', `no progress: the same proposal ${repeated} turns in a row`);
        }

        let results = await dispatchTurn(turn, plan as Extract<PlanResponse, { kind: 'proposals' }>);
        const failedDownstream = results.filter(
          (o) => o.state === 'FAILED' && ledger.projection.calls[o.logicalCallId]?.intentRecorded === true,
        );
        if (failedDownstream.length > 0 && input.onToolFailure !== 'report_to_model')
          return await compensateAndStop(turn, failedDownstream);

        const DENIALS = [
          Failure.AuthorizationDenied,
          Failure.TenantMismatch,
          Failure.ApprovalDenied,
          Failure.ApprovalTimedOut,
        ];
        if (
          input.onDenied === 'stop' &&
          results.length > 0 &&
          results.every((o) => DENIALS.includes((o.error?.code ?? '') as (typeof DENIALS)[number]))
        ) {
          return await stop(
            'authorization_denied',
            results.map((o) => `${o.toolName}: ${o.error?.message ?? ''}`).join('; '),
          );
        }
        const open = unknownCalls(ledger.projection);
        if (open.length > 0) {
          ledger.append({ type: 'OperatorWaitStarted', unknownCalls: open });
          show();
          const settled = await condition(
            () => unknownCalls(ledger.projection).length === 0,
            Math.max(0, deadlineAtMs - Date.now()),
          );
          if (!settled) return await stop('outcome_unknown', `calls still UNKNOWN at the deadline: ${open.join(', ')}`);
          results = results.map((o) => {
            const c = ledger.projection.calls[o.logicalCallId];
            return o.state === 'UNKNOWN' && c ? { ...o, state: c.state === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED' } : o;
          });
          // An operator who settles a call FAILED late: the turn's other effects are offset as for any failed call.
          const settledFailed = results.filter(
            (o) =>
              o.state === 'FAILED' &&
              open.includes(o.logicalCallId) &&
              ledger.projection.calls[o.logicalCallId]?.intentRecorded === true,
          );
          if (settledFailed.length > 0 && input.onToolFailure !== 'report_to_model' && patched(SETTLE_STANDING_EFFECTS))
            return await compensateAndStop(turn, settledFailed);
        }
        observations = results;
        if (results.some((o) => o.error?.code === Failure.BudgetToolCalls))
          return await stop('budget_exhausted', `tool calls: ${budgets.maxToolCalls} used`);
      }
    });
  } catch (err) {
    if (err instanceof DeadlineTooClose) return stop('deadline_exceeded', err.message);
    if (isCancellation(err)) {
      // Cancelling proves only that we stopped waiting. Calls in flight were marked UNKNOWN and reconciled by
      // their runners (reconciliation is not cancellable); nothing new is dispatched.
      const inFlight = Object.values(ledger.projection.calls)
        .filter((c) => c.state === 'UNKNOWN' || c.state === 'DISPATCHING')
        .map((c) => c.logicalCallId);
      const by = cancelledBy();
      ledger.append({
        type: 'CancellationRequested',
        inFlight,
        ...(by ? { requestedBy: by.actor, reason: by.reason } : {}),
      });
      const who = by ? ` by ${by.actor.principalId}` : '';
      return stop(
        'operator_stopped',
        `cancelled by request${who}${inFlight.length ? `; still unsettled: ${inFlight.join(', ')}` : ''}`,
      );
    }
    throw err;
  }
}
