/**
 * A governed session: the run model (model.ts) of an agent loop the team writes itself (the AI SDK's
 * `generateText`, an Agents `Runner`), opened inside the team's own workflow. The loop and its model stay the
 * team's; every effect it asks for goes through the call runner (call-runner.ts `runCall`, its one settle
 * `leave`), exactly as an agent run's proposals do: validated, keyed by the canonical arguments' hash, decided at
 * dispatch against the verified principal and the held policy, approved by a verified person when the policy asks,
 * reconciled by the recovery table after a lost response, with its compensation registered before dispatch.
 *
 *   const session = await openGovernedSession({ principal, identityToken, deadlineAt });
 *   const answer = await session.call({ tool: 'refund_order', args, providerCallId });   // a GovernedResult
 *   return session.end(text);                                                              // saga, typed stop
 *
 * What it installs on the workflow: the `ledger` and `retryAccounting` queries and the `decideApproval`,
 * `resolveCall` and `requestCancel` updates of the agent run (definitions.ts), so `ledgerloop show`, `audit` and
 * the console read and answer it as they do an agent run. Open one session per workflow.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
} from '@temporalio/workflow';
import type { Observation } from '../../src/domain/activity-contracts';
import { DeadlineTooClose } from '../../src/domain/activity-presets';
import { Failure } from '../../src/domain/failures';
import { checkRunInput } from '../../src/domain/run-input-check';
import {
  type AgentRunInput,
  type AgentRunResult,
  type AttemptLimits,
  type Budgets,
  type Principal,
  type RetryStrategy,
  type TimeoutCaps,
} from '../../src/domain/run';
import { runCall, withGrace } from '../call-runner';
import { endRun, type CancelledBy } from '../ending';
import { verifyRunIdentity } from '../identity';
import { Ledger } from '../ledger';
import { callBase, type ValidatedCall } from '../model';
import { installRunHandlers } from '../handlers';
import { RunCore } from '../run-core';
import { runResult } from '../run-view';
import { IntentCalls } from '../steps/intents';
import { prepareProposal } from '../steps/prepare';
import { cancelledStop, deadlineStop, nextStop, type DecidedStop, type Stop } from '../stops';
import { governedResult, type GovernedResult } from './tool-result';

export interface GovernedSessionOptions {
  /** Who the session acts for; must equal what the verified identity token names, else every call refuses. */
  readonly principal: Principal;
  /**
   * The principal's identity token (compact Ed25519 JWS of an issuer the worker's `LedgerloopPlugin` knows),
   * verified by the `verifyIdentity` activity when the session opens. Missing or refused: the session is opened
   * refused and every governed call answers `refused` (fail closed). Pass it in the workflow's input (the payload
   * codec encrypts it); the ledger records only its subject and digest.
   */
  readonly identityToken: string | undefined;
  /** The one absolute deadline of the session (ISO 8601 with zone): every attempt's timeout is derived from it. */
  readonly deadlineAt: string;
  /** What a retry after a lost response may do; default `check_receipt` (look up by key before any resend). */
  readonly strategy?: RetryStrategy;
  /** Budgets; default DEFAULT_BUDGETS (`maxToolCalls` caps the intents the loop may make). */
  readonly budgets?: Partial<Budgets>;
  readonly limits?: Partial<AttemptLimits>;
  readonly caps?: Partial<TimeoutCaps>;
  /**
   * What `end` does with a call that failed downstream after its intent: `report_to_model` (default: the loop
   * already read the failure as a tool result and went on) or `compensate_and_stop` (offset what took effect and
   * stop `tool_failed`).
   */
  readonly onToolFailure?: AgentRunInput['onToolFailure'];
  /** What a session that stops other than `completed` does with standing effects; default `compensate`. */
  readonly onAbort?: AgentRunInput['onAbort'];
  /** What the ledger records as the run's goal; default `governed session`. */
  readonly goal?: string;
}

/** One call the loop asks for: the tool's name, its arguments as the loop parsed them, the provider's call id. */
export interface SessionCall {
  readonly tool: string;
  readonly args: unknown;
  /** The loop's id for the call (the AI SDK's `toolCallId`): recorded beside the logical call id. */
  readonly providerCallId: string;
  /** The loop's step the call belongs to (1 for the first); default 1. Part of the logical call id. */
  readonly step?: number;
}

/** How a session ended: the run's typed result, and the value the loop ended with. */
export type SessionResult<T> = AgentRunResult & { readonly value: T | undefined };

/** Open a governed session in the calling workflow: handlers installed, identity verified, the run recorded. */
export async function openGovernedSession(options: GovernedSessionOptions): Promise<GovernedSession> {
  const session = new GovernedSession(sessionInput(options));
  await session.open();
  return session;
}

/** The session as an agent-run input, checked as one: a bad option fails the workflow, typed, never a task. */
function sessionInput(o: GovernedSessionOptions): AgentRunInput {
  const raw: AgentRunInput = {
    principal: o?.principal,
    ...(o?.identityToken !== undefined ? { identityToken: o.identityToken } : {}),
    goal: o?.goal ?? 'governed session',
    strategy: o?.strategy ?? 'check_receipt',
    planner: { kind: 'governed-session' },
    deadlineAt: o?.deadlineAt,
    onToolFailure: o?.onToolFailure ?? 'report_to_model',
    ...(o?.onAbort !== undefined ? { onAbort: o.onAbort } : {}),
    ...(o?.budgets !== undefined ? { budgets: o.budgets } : {}),
    ...(o?.limits !== undefined ? { limits: o.limits } : {}),
    ...(o?.caps !== undefined ? { caps: o.caps } : {}),
  };
  const checked = checkRunInput(raw);
  if (!checked.ok)
    throw ApplicationFailure.create({
      type: Failure.RunInputInvalid,
      nonRetryable: true,
      message: checked.message.replace('the run input', 'the governed session options'),
    });
  return checked.input;
}

export class GovernedSession extends RunCore {
  private readonly calls: IntentCalls;
  /** Occurrences per step, by tool and hash: the occurrence part of each logical call id. */
  private readonly steps = new Map<number, Map<string, number>>();
  private readonly observations: Observation[] = [];
  private identityRefused: string | undefined;
  /** The deadline came too close for a call: the session's stop, whatever the loop ends with. */
  private interrupted: Stop | undefined;
  private ended = false;
  private readonly cancelledBy: CancelledBy;

  constructor(input: AgentRunInput) {
    super(input, new Ledger());
    this.calls = new IntentCalls(this);
    // The agent run's queries and updates, over this state: the console and the CLI answer a session as a run.
    this.cancelledBy = installRunHandlers(this);
  }

  /** Verify the identity (fail closed), hold the policy it came with, record the run's start. */
  async open(): Promise<void> {
    this.identityRefused = this.recordOpening(await verifyRunIdentity(this.input.identityToken, this.input.principal));
    this.view.identify({ principal: this.who.principalId, tenant: this.who.tenant, strategy: this.strategy });
    this.show();
  }

  /**
   * Run one call the loop asks for, and answer what it may read. Never throws for anything the call meets
   * (a refusal, the deadline, a cancel, an unreadable argument): only a defect of this code would.
   */
  async call(c: SessionCall): Promise<GovernedResult> {
    const step = Number.isSafeInteger(c.step) && (c.step ?? 0) >= 1 ? (c.step as number) : 1;
    const argumentsJson = argumentsText(c.args);
    const inStep = this.steps.get(step) ?? new Map<string, number>();
    this.steps.set(step, inStep);
    const providerCallId = typeof c.providerCallId === 'string' ? c.providerCallId.slice(0, 200) : '';
    const prepared = prepareProposal(this, step, { providerCallId, name: String(c.tool), argumentsJson }, inStep);
    if (!prepared.ok) return this.answered(prepared.observation, '');
    const refusal = this.refusalBeforeCall();
    if (refusal) return this.answered(this.rejectUnsent(prepared.call, refusal), prepared.call.operationKey);
    this.show();
    try {
      const o = await this.scope.run(() => this.calls.call(prepared.call));
      return this.answered(o, prepared.call.operationKey);
    } catch (err) {
      // The call runner settled the call on its way out (`leave`); what remains is to say why it stopped.
      if (err instanceof DeadlineTooClose) {
        this.interrupted ??= deadlineStop(err.message);
        return this.answered(this.settledAs(prepared.call, Failure.DeadlineTooClose, err.message), '');
      }
      if (isCancellation(err))
        return this.answered(this.settledAs(prepared.call, Failure.RunCancelled, 'the run was cancelled'), '');
      throw err;
    } finally {
      this.show();
    }
  }

  /** End the session with the loop's value: the typed stop, after the saga and the settlement of what stands. */
  end<T>(value: T): Promise<SessionResult<T>> {
    return this.finish(value, undefined);
  }

  /**
   * End the session after the loop failed: a cancel stops `operator_stopped`, the deadline `deadline_exceeded`,
   * anything else `model_failed` (the loop is the session's planner). Standing effects are settled by `onAbort`
   * first. Returns the result instead of throwing, so the workflow ends with a typed stop.
   */
  fail(error: unknown): Promise<SessionResult<never>> {
    return this.finish(undefined, { error });
  }

  private async finish<T>(value: T | undefined, failed: { error: unknown } | undefined): Promise<SessionResult<T>> {
    if (this.ended)
      throw ApplicationFailure.create({
        type: Failure.SessionMisused,
        nonRetryable: true,
        message: 'the governed session was already ended',
      });
    this.ended = true;
    const stop = await this.stopFor(value, failed);
    const decided = await endRun(
      {
        ledger: this.ledger,
        saga: this.saga,
        tools: this.tools,
        onAbort: this.onAbort,
        lost: [],
        scope: this.scope,
        cancelledBy: this.cancelledBy,
        run: (call) => runCall(withGrace(this), call),
        show: this.show,
      },
      stop,
    );
    this.show();
    await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
    return { ...runResult(this.ledger, decided.reason, decided.detail, decided.finalText), value };
  }

  /** Why the session stops, from what it met and how the loop ended. */
  private async stopFor(value: unknown, failed: { error: unknown } | undefined): Promise<Stop> {
    const opened = nextStop(this.facts, { at: 'opened', ...this.refusedAtOpening() });
    if (opened) return opened;
    if (this.interrupted) return this.interrupted;
    if (this.scope.consideredCancelled || (failed && isCancellation(failed.error))) return this.cancelled();
    if (failed?.error instanceof DeadlineTooClose) return deadlineStop(failed.error.message);
    const open = this.ledger.callsIn('UNKNOWN');
    if (open.length > 0) {
      // As an agent run does: what reconciliation left UNKNOWN waits, until the deadline, for an operator.
      this.ledger.append({ type: 'OperatorWaitStarted', unknownCalls: [...open] });
      this.show();
      const settled = await CancellationScope.nonCancellable(() =>
        condition(() => this.ledger.countIn('UNKNOWN') === 0, Math.max(0, this.deadlineAtMs - Date.now())),
      );
      const results = this.currentObservations();
      const waited = nextStop(this.facts, { at: 'operator_waited', turn: this.lastStep, results, open, settled });
      if (waited) return waited;
    }
    const dispatched = nextStop(this.facts, {
      at: 'dispatched',
      turn: this.lastStep,
      results: this.currentObservations(),
    });
    if (dispatched) return dispatched;
    if (failed) {
      const why = failed.error instanceof Error ? failed.error.message : String(failed.error);
      return decided('model_failed', `the agent loop failed: ${why.slice(0, 500)}`);
    }
    return decided(
      'completed',
      `the agent loop ended after ${this.observations.length} governed call(s)`,
      typeof value === 'string' ? value : undefined,
    );
  }

  private cancelled(): Stop {
    const unsettled = this.ledger.callsIn('UNKNOWN');
    const by = this.cancelledBy();
    if (!this.ledger.projection.cancelRequested)
      this.ledger.append({
        type: 'CancellationRequested',
        inFlight: unsettled,
        ...(by ? { requestedBy: by.actor, reason: by.reason } : {}),
      });
    return cancelledStop(unsettled, by);
  }

  private refusedAtOpening(): { identityRefused?: string } {
    return this.identityRefused === undefined ? {} : { identityRefused: this.identityRefused };
  }

  private get facts() {
    return { projection: this.ledger.projection, budgets: this.budgets, input: this.input };
  }

  private get lastStep(): number {
    return Math.max(1, ...this.steps.keys());
  }

  /** Every observation the loop read, each with its call's state as the ledger holds it now. */
  private currentObservations(): Observation[] {
    return this.observations.map((o) => {
      const c = this.ledger.projection.calls[o.logicalCallId];
      if (o.state !== 'UNKNOWN' || c === undefined || c.state === 'UNKNOWN') return o;
      return { ...o, state: c.state === 'SUCCEEDED' ? 'SUCCEEDED' : 'FAILED' };
    });
  }

  /** A refusal owed before any decision: an identity that did not verify, a stop already reached, or the end. */
  private refusalBeforeCall(): { code: string; message: string } | undefined {
    if (this.identityRefused !== undefined)
      return { code: Failure.IdentityInvalid, message: `the session's identity was refused (${this.identityRefused})` };
    if (this.ended) return { code: Failure.RunInterrupted, message: 'the governed session has ended' };
    if (this.interrupted) return { code: Failure.DeadlineTooClose, message: 'the run deadline is too close' };
    if (this.scope.consideredCancelled) return { code: Failure.RunCancelled, message: 'the run was cancelled' };
    return undefined;
  }

  /** Record a keyed call refused before its decision: nothing was dispatched. */
  private rejectUnsent(call: ValidatedCall, why: { code: string; message: string }): Observation {
    this.ledger.append({ type: 'ProposalRejected', logicalCallId: call.logicalCallId, ...why });
    return { ...callBase(call), state: 'FAILED', error: why };
  }

  /** The call as `leave` settled it, for a call that left its runner by a throw. */
  private settledAs(call: ValidatedCall, code: string, message: string): Observation {
    const view = this.ledger.projection.calls[call.logicalCallId];
    const base = callBase(call);
    if (view?.state === 'SUCCEEDED') return { ...base, state: 'SUCCEEDED' };
    if (view?.state === 'UNKNOWN') return { ...base, state: 'UNKNOWN', error: { code, message } };
    return { ...base, state: 'FAILED', error: { code, message } };
  }

  private answered(o: Observation, operationKey: string): GovernedResult {
    this.observations.push(o);
    return governedResult(o, operationKey);
  }
}

/** The arguments as the validation reads them: JSON text (what cannot be written as JSON is refused there). */
function argumentsText(args: unknown): string {
  try {
    return JSON.stringify(args ?? null) ?? 'null';
  } catch {
    return '\u0000unreadable';
  }
}

function decided(reason: DecidedStop['reason'], detail: string, finalText?: string): DecidedStop {
  return { kind: 'stop', reason, detail, ...(finalText !== undefined ? { finalText } : {}) };
}
