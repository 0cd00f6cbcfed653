/**
 * `AgentRun`: one run's state (the run model every step reads, model.ts), and its turns told in the essay's order.
 * The workflow function (`agent-run.workflow.ts`) registers the handlers over this state, then calls `execute`.
 *
 * A turn: `plan` (the model proposes) → for each proposal `validate` → `key` → `runCall` (decide, record the
 * intent, dispatch, settle; call-runner.ts); a failed effect → `compensate`. After each step `nextStop` (stops.ts)
 * says whether the run ends here, and why. Every stop but `completed` settles what stands (`onAbort`) and names
 * what it leaves for an operator.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  workflowInfo,
} from '@temporalio/workflow';
import type { Observation, PlanResponse, ProposedCall } from '../src/domain/activity-contracts';
import { DeadlineTooClose } from '../src/domain/activity-presets';
import { Failure } from '../src/domain/failures';
import { type Projection } from '../src/domain/reducer';
import { type AgentRunInput, type AgentRunResult, type CarriedState } from '../src/domain/run';
import { workflowTools } from '../src/tools/workflow-registry';
import { proposalSignature } from './budgets';
import { runCall, withGrace } from './call-runner';
import { verifyRunIdentity, type RunIdentity } from './identity';
import { openWithFirstPlan } from './opening';
import { Ledger } from './ledger';
import { RunCore } from './run-core';
import { runResult } from './run-view';
import { type SagaRegistration } from './steps/compensate';
import { endRun, type CancelledBy } from './ending';
import { IntentCalls } from './steps/intents';
import { prepareProposal } from './steps/prepare';
import { plan, recordFirstPlan, type Planned } from './steps/plan';
import { cancelledStop, deadlineStop, nextStop, type Moment, type Stop } from './stops';

export class AgentRun extends RunCore {
  private readonly carried: CarriedState | undefined;
  /** Compensations carried across continue-as-new whose tool this worker no longer knows (forward call ids). */
  private readonly lostRegistrations: readonly string[];
  private observations: Observation[];
  /** A new run's first turn, planned at its opening and recorded when turn 1 begins. */
  private firstPlan: Planned | undefined;
  private lastSignature: string | undefined;
  private repeated: number;
  /** Who asked a verified cancel, from the cancel handler (`execute`). */
  private cancelledBy: CancelledBy = () => undefined;

  constructor(input: AgentRunInput) {
    const carried = input.carried;
    super(
      input,
      new Ledger(
        carried ? { projection: carried.projection as Projection, eventCount: carried.eventCount } : undefined,
      ),
    );
    this.carried = carried;
    // Compensations are owed across continue-as-new: the registrations travel with the carried state.
    this.lostRegistrations = carried?.saga ? this.saga.restore(carried.saga as SagaRegistration[]) : [];
    this.startIdentity = carried?.identity;
    this.observations = (carried?.observations ?? []) as Observation[];
    this.lastSignature = carried?.lastProposalSignature;
    this.repeated = carried?.repeatedTurns ?? 0;
  }

  /** The whole run: open it, take turns until a stop, end it. */
  async execute(cancelledBy: CancelledBy): Promise<AgentRunResult> {
    this.cancelledBy = cancelledBy;
    const opened = nextStop(this.facts, { at: 'opened', ...(await this.open()) });
    if (opened) return this.end(opened);
    try {
      return await this.scope.run(() => this.turns());
    } catch (err) {
      if (err instanceof DeadlineTooClose) return this.end(deadlineStop(err.message));
      if (!isCancellation(err)) throw err;
      // Cancelling proves only that we stopped waiting. Every call settled on its way out (call-runner.ts):
      // what it may have sent was looked up by key; nothing new is dispatched.
      const unsettled = this.ledger.callsIn('UNKNOWN');
      const by = cancelledBy();
      this.ledger.append({
        type: 'CancellationRequested',
        inFlight: unsettled,
        ...(by ? { requestedBy: by.actor, reason: by.reason } : {}),
      });
      return this.end(cancelledStop(unsettled, by));
    }
  }

  private async turns(): Promise<AgentRunResult> {
    for (let turn = this.carried?.nextTurn ?? 1; ; turn++) {
      let stop = this.check({ at: 'turn', turn });
      if (stop) return this.end(stop);
      if (workflowInfo().historyLength > this.budgets.maxHistoryEvents || workflowInfo().continueAsNewSuggested)
        return this.continueAsNew(turn);

      const planned = this.takeFirstPlan(turn) ?? (await plan(this, turn, this.observations));
      if (!planned.ok) return this.end(this.check({ at: 'model_failed', cause: planned.cause })!);
      const proposals = planned.plan.kind === 'proposals' ? planned.plan.proposals : [];
      stop = this.check({ at: 'planned', turn, plan: planned.plan, repeated: this.noteProposals(planned.plan) });
      if (stop) return this.end(stop);

      let results = await this.callAll(turn, proposals);
      stop = this.check({ at: 'dispatched', turn, results });
      if (stop) return this.end(stop);

      const open = this.ledger.callsIn('UNKNOWN');
      if (open.length > 0) {
        const settled = await this.waitForOperator(open);
        results = results.map((o) => {
          const c = this.ledger.projection.calls[o.logicalCallId];
          return o.state === 'UNKNOWN' && c ? { ...o, state: c.state === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED' } : o;
        });
        stop = this.check({ at: 'operator_waited', turn, results, open, settled });
        if (stop) return this.end(stop);
      }
      this.observations = results;
      stop = this.check({ at: 'turn_end', results });
      if (stop) return this.end(stop);
    }
  }

  /**
   * Turn 1's plan when the opening asked for it. A run cancelled before turn 1 asks again, as any run does, and
   * that ask meets the cancellation.
   */
  private takeFirstPlan(turn: number): Planned | undefined {
    const first = this.firstPlan;
    this.firstPlan = undefined;
    if (first === undefined || turn !== 1 || CancellationScope.current().consideredCancelled) return undefined;
    return recordFirstPlan(this, first);
  }

  private get facts() {
    return { projection: this.ledger.projection, budgets: this.budgets, input: this.input };
  }

  private check(m: Moment): Stop | null {
    return nextStop(this.facts, m);
  }

  /** Record the run's start (identity verified, policy held), or take over the state continue-as-new carried. */
  private async open(): Promise<{ identityRefused?: string }> {
    const { input, ledger, carried } = this;
    let refused: string | undefined;
    if (carried) {
      // Carried state is the workflow's own, handed over at continue-as-new; a starter that sets it is refused.
      if (workflowInfo().continuedFromExecutionRunId === undefined) {
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
      refused = this.recordOpening(await this.verifyOpening());
    }
    this.view.identify({ principal: this.who.principalId, tenant: this.who.tenant, strategy: input.strategy });
    this.show();
    return refused === undefined ? {} : { identityRefused: refused };
  }

  /**
   * Verify the run's token before any model call. A run with a token and a turn to take has its first planning
   * turn verify it; otherwise (or when that turn cannot say who the token names) it is verified on its own.
   */
  private async verifyOpening(): Promise<RunIdentity> {
    const token = this.input.identityToken;
    if (token !== undefined && this.budgets.maxTurns >= 1) {
      const { checked, first } = await openWithFirstPlan(this, token);
      this.firstPlan = first;
      return checked;
    }
    return verifyRunIdentity(token, this.input.principal);
  }

  /** Count turns proposing the same calls as the last (no-progress detection); returns the count. */
  private noteProposals(planned: PlanResponse): number {
    if (planned.kind !== 'proposals') return this.repeated;
    const signature = proposalSignature(planned.proposals);
    this.repeated = signature === this.lastSignature ? this.repeated + 1 : 1;
    this.lastSignature = signature;
    return this.repeated;
  }

  /** One turn's calls side by side; each is tracked by its logical call id, never by position. */
  private async callAll(turn: number, proposals: readonly ProposedCall[]): Promise<Observation[]> {
    const inTurn = new Map<string, number>();
    const cap = this.budgets.maxProposalsPerTurn;
    const prepared = proposals.map((p, i) => prepareProposal(this, turn, p, inTurn, i >= cap ? cap : undefined));
    this.show();
    // One intent, one call (steps/intents.ts): a proposal naming an intent already made gets its outcome.
    const calls = new IntentCalls(this);
    const settled = await Promise.allSettled(
      prepared.map((p) => (p.ok ? calls.call(p.call) : Promise.resolve(p.observation))),
    );
    const rejected = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (rejected) throw rejected.reason;
    this.show();
    return settled.map((s) => (s as PromiseFulfilledResult<Observation>).value);
  }

  /** Calls still UNKNOWN after reconciliation: wait, until the deadline, for an operator to settle them. */
  private async waitForOperator(open: readonly string[]): Promise<boolean> {
    this.ledger.append({ type: 'OperatorWaitStarted', unknownCalls: [...open] });
    this.show();
    return condition(() => this.ledger.countIn('UNKNOWN') === 0, Math.max(0, this.deadlineAtMs - Date.now()));
  }

  /** Carry the projection and the open work forward, never the transcript (the planner keeps it by reference). */
  private async continueAsNew(turn: number): Promise<never> {
    await condition(allHandlersFinished);
    const snap = this.ledger.snapshot();
    const next: CarriedState = {
      fromTemporalRunId: workflowInfo().runId,
      projection: snap.projection,
      projectionHash: snap.projectionHash,
      eventCount: snap.eventCount,
      nextTurn: turn,
      observations: this.observations,
      ...(this.lastSignature !== undefined ? { lastProposalSignature: this.lastSignature } : {}),
      repeatedTurns: this.repeated,
      usage: { tokens: snap.projection.tokens, costMicros: snap.projection.costMicros },
      ...(this.saga.size > 0 ? { saga: this.saga.carried() } : {}),
      ...(this.startIdentity ? { identity: this.startIdentity } : {}),
    };
    // The identity token is not carried: the continued run starts from the verified projection.
    const { identityToken: _verifiedAtStart, ...rest } = this.input;
    return continueAsNew<(input: AgentRunInput) => Promise<AgentRunResult>>({ ...rest, carried: next });
  }

  /**
   * End the run (ending.ts): from here nothing a caller does interrupts it. The failed turn's saga and the
   * settlement of what stands run to their end, a cancel that arrives meanwhile is recorded and honoured by the
   * stop; then publish, and return.
   */
  private async end(s: Stop): Promise<AgentRunResult> {
    const stop = await endRun(
      {
        ledger: this.ledger,
        saga: this.saga,
        tools: workflowTools,
        onAbort: this.onAbort,
        lost: this.lostRegistrations,
        scope: this.scope,
        cancelledBy: this.cancelledBy,
        run: (c) => runCall(withGrace(this), c),
        show: this.show,
      },
      s,
    );
    this.show();
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
    return runResult(this.ledger, stop.reason, stop.detail, stop.finalText);
  }
}
