/**
 * Step 8, `compensate`. Saga compensation. A compensation is a new governed effect (its own operation key, a fresh authorization at
 * dispatch, a deadline-bounded retry policy, reconciliation, an outcome in the ledger), never a rollback.
 * It is registered before its forward call is dispatched, so a forward effect left UNKNOWN is still covered:
 * compensations name the forward effect by its operation key, and the downstream refuses, with no effect and
 * a sealed forward key, to offset something that never happened.
 */
import { CancellationScope } from '@temporalio/workflow';
import type { Observation } from '../../src/domain/activity-contracts';
import { DeadlineTooClose } from '../../src/domain/activity-presets';
import type { StopReason } from '../../src/domain/run';
import { hashCanonical, type Json } from '../../src/domain/canonical';
import { deriveOperationKey } from '../../src/domain/operation-key';
import type { LeftStanding } from '../../src/domain/ledger-events';
import { isSettled } from '../../src/domain/lifecycle';
import type { CallView } from '../../src/domain/reducer';
import type { AnyTool, DispatchContext } from '../../src/domain/tool';
import type { ToolRegistry } from '../../src/tools/registry';
import type { Ledger } from '../ledger';
import type { ValidatedCall } from '../model';

interface Registered {
  readonly forward: { readonly logicalCallId: string; readonly toolName: string };
  readonly compensation: ValidatedCall;
}

/** What a registration needs to survive continue-as-new: the compensation is rebuilt from it, unchanged. */
export interface SagaRegistration {
  readonly forwardCallId: string;
  readonly forwardToolName: string;
  readonly compensationToolName: string;
  /** The compensation tool's arguments, as its schema parsed them when the forward call was registered. */
  readonly args: Json;
}

export interface SagaOutcome {
  readonly offset: readonly string[];
  readonly nothingToOffset: readonly string[];
  /** Compensations that failed or whose outcome stayed UNKNOWN: an operator must act. */
  readonly unsettled: readonly string[];
  /** Compensations the deadline (and its grace) left no room to begin: an operator must act. */
  readonly noTime: readonly string[];
}

export class Saga {
  private readonly registered: Registered[] = [];
  /** What came of each compensation this run dispatched (or had no time to), by forward call id. */
  private readonly handled = new Map<string, keyof SagaOutcome>();

  constructor(
    private readonly ledger: Ledger,
    private readonly tools: ToolRegistry,
    private readonly runId: string,
    private readonly who: DispatchContext,
  ) {}

  get size(): number {
    return this.registered.length;
  }

  /** The registrations as continue-as-new carries them forward. */
  carried(): SagaRegistration[] {
    return this.registered.map(({ forward, compensation }) => ({
      forwardCallId: forward.logicalCallId,
      forwardToolName: forward.toolName,
      compensationToolName: compensation.tool.name,
      args: compensation.args as Json,
    }));
  }

  /**
   * Take over the registrations a previous run of this workflow carried forward (already in the ledger: no event
   * is appended). A registration whose tool this worker no longer knows is kept out and returned, so the run can
   * name the effect for an operator rather than drop it.
   */
  restore(registrations: readonly SagaRegistration[]): string[] {
    const lost: string[] = [];
    for (const r of registrations) {
      const tool = this.tools.get(r.compensationToolName);
      const parsed = tool?.args.safeParse(r.args);
      if (tool === undefined || parsed === undefined || !parsed.success) {
        lost.push(r.forwardCallId);
        continue;
      }
      this.registered.push({
        forward: { logicalCallId: r.forwardCallId, toolName: r.forwardToolName },
        compensation: this.compensationCall(tool, parsed.data, r.forwardCallId),
      });
    }
    return lost;
  }

  /** Forward calls with a registered compensation (their ids). */
  covers(forwardCallId: string): boolean {
    return this.registered.some((r) => r.forward.logicalCallId === forwardCallId);
  }

  private compensationCall(tool: AnyTool, args: unknown, forwardCallId: string): ValidatedCall {
    const body = tool.canonicalize(args, this.who);
    const argumentsHash = hashCanonical(body);
    const operationKey = deriveOperationKey({
      tenant: this.who.tenant,
      runId: this.runId,
      toolName: tool.name,
      toolVersion: tool.version,
      argumentsHash,
    });
    return {
      tool,
      args,
      body,
      logicalCallId: `cmp_${forwardCallId}`,
      providerCallId: 'saga',
      operationKey,
      argumentsHash,
      origin: 'compensation',
    };
  }

  /** Declare how `forward` would be offset. Pure apart from the ledger append; called before its dispatch. */
  register(forward: ValidatedCall): void {
    const plan = forward.tool.compensation;
    if (plan.kind !== 'compensate' || forward.origin !== 'model') return;
    const tool = this.tools.get(plan.tool);
    if (tool === undefined) throw new Error(`${forward.tool.name} names an unknown compensation tool ${plan.tool}`);
    const args = tool.args.parse(plan.args({ args: forward.args, operationKey: forward.operationKey }));
    const compensation = this.compensationCall(tool, args, forward.logicalCallId);
    this.ledger.append({
      type: 'CompensationRegistered',
      forwardCallId: forward.logicalCallId,
      compensationCallId: compensation.logicalCallId,
      toolName: tool.name,
      operationKey: compensation.operationKey,
      argumentsHash: compensation.argumentsHash,
    });
    this.registered.push({
      forward: { logicalCallId: forward.logicalCallId, toolName: forward.tool.name },
      compensation,
    });
  }

  /**
   * Offset every registered effect whose forward call SUCCEEDED or is UNKNOWN, newest first, each once. `run`
   * dispatches one compensation through the full pipeline (authorization at dispatch included).
   *
   * From its first compensation to its last, nothing a caller does interrupts the saga: it runs in a scope no
   * cancellation reaches, whatever scope it is called from. A cancel of the caller (an update that cancels its
   * scope, Temporal's cancel of the workflow) meanwhile cancels no compensation's activity, so none is ever looked
   * up and sealed because it was cancelled, and every later one is still dispatched. The caller sees the cancel
   * once the saga returns (its scope is cancelled) and honours it then (`ending.ts`).
   *
   * A pass reports every registered effect the saga has handled in this run, those an earlier pass handled too:
   * a compensation an earlier pass began (whatever came of it) is never dispatched again. It can end FAILED only
   * on evidence (the downstream refused it, or held nothing under its key and sealed it), or for want of time.
   */
  compensate(turn: number, reason: string, run: (call: ValidatedCall) => Promise<Observation>): Promise<SagaOutcome> {
    return CancellationScope.nonCancellable(() => this.offsetAll(turn, reason, run));
  }

  private async offsetAll(
    turn: number,
    reason: string,
    run: (call: ValidatedCall) => Promise<Observation>,
  ): Promise<SagaOutcome> {
    const out: Record<keyof SagaOutcome, string[]> = { offset: [], nothingToOffset: [], unsettled: [], noTime: [] };
    for (const registered of [...this.registered].reverse()) {
      const id = registered.forward.logicalCallId;
      // Begun once: by this run (its outcome remembered), or before it as the ledger shows (nothing known of it).
      const begun = this.ledger.projection.calls[registered.compensation.logicalCallId] !== undefined;
      const earlier = this.handled.get(id) ?? (begun ? 'unsettled' : undefined);
      if (earlier !== undefined) {
        out[earlier].push(id);
        continue;
      }
      const view = this.ledger.projection.calls[id];
      if (view?.state !== 'SUCCEEDED' && view?.state !== 'UNKNOWN') continue;
      const outcome = await this.offset(registered, view.state, turn, reason, run);
      this.handled.set(id, outcome);
      out[outcome].push(id);
    }
    return out;
  }

  /** Dispatch one compensation and record what came of it for its forward call. */
  private async offset(
    { forward, compensation }: Registered,
    forwardState: 'SUCCEEDED' | 'UNKNOWN',
    turn: number,
    reason: string,
    run: (call: ValidatedCall) => Promise<Observation>,
  ): Promise<keyof SagaOutcome> {
    this.recordStarted(compensation, forward.logicalCallId, turn, reason);
    let obs: Observation;
    try {
      obs = await run(compensation);
    } catch (err) {
      // Too close to the deadline: the compensation was settled as not sent; an operator must act.
      if (!(err instanceof DeadlineTooClose)) throw err;
      return 'noTime';
    }
    return this.recordOutcome({ forward, compensation }, forwardState, obs);
  }

  /** The compensation's start and its intent (proposed, canonicalized), before it is dispatched. */
  private recordStarted(compensation: ValidatedCall, forwardCallId: string, turn: number, reason: string): void {
    this.ledger.append({
      type: 'CompensationStarted',
      forwardCallId,
      compensationCallId: compensation.logicalCallId,
      reason,
    });
    this.ledger.append({
      type: 'ToolProposalRecorded',
      turn,
      logicalCallId: compensation.logicalCallId,
      providerCallId: compensation.providerCallId,
      toolName: compensation.tool.name,
      origin: 'compensation',
    });
    this.ledger.append({
      type: 'ArgumentsCanonicalized',
      logicalCallId: compensation.logicalCallId,
      toolVersion: compensation.tool.version,
      argumentsHash: compensation.argumentsHash,
      operationKey: compensation.operationKey,
    });
  }

  /** What the compensation's observation means for it and, when it tells, for its forward call. */
  private recordOutcome(
    { forward, compensation }: Registered,
    forwardState: 'SUCCEEDED' | 'UNKNOWN',
    obs: Observation,
  ): keyof SagaOutcome {
    const ids = { forwardCallId: forward.logicalCallId, compensationCallId: compensation.logicalCallId };
    // A compensation that refuses an absent forward effect offsets only one the downstream holds.
    const checksForward = (compensation.tool.forwardAbsentReasons ?? []).length > 0;
    const absent =
      obs.state === 'FAILED' &&
      checksForward &&
      compensation.tool.forwardAbsentReasons!.includes(obs.error?.code ?? '');
    const settleForward = (outcome: 'SUCCEEDED' | 'FAILED', detail: string) =>
      this.ledger.append({
        type: 'ToolEffectReconciled',
        logicalCallId: forward.logicalCallId,
        via: 'compensation',
        outcome,
        detail,
      });
    if (obs.state === 'SUCCEEDED') {
      const detail = `${compensation.tool.name} offset ${forward.toolName}`;
      this.ledger.append({ type: 'CompensationCompleted', ...ids, outcome: 'OFFSET', detail });
      if (forwardState === 'UNKNOWN' && checksForward)
        settleForward('SUCCEEDED', `${compensation.tool.name} offset the effect under the forward key, so it existed`);
      return 'offset';
    }
    if (absent) {
      const detail = `${forward.toolName} never took effect; its key is sealed`;
      this.ledger.append({ type: 'CompensationCompleted', ...ids, outcome: 'NOTHING_TO_OFFSET', detail });
      if (forwardState === 'UNKNOWN')
        settleForward('FAILED', 'the downstream holds no effect under the key and sealed it');
      return 'nothingToOffset';
    }
    const detail =
      `${compensation.tool.name} ${obs.state}: ${obs.error?.code ?? ''} ${obs.error?.message ?? ''}`.trim();
    const outcome = obs.state === 'UNKNOWN' ? 'UNKNOWN' : 'FAILED';
    this.ledger.append({ type: 'CompensationCompleted', ...ids, outcome, detail });
    return 'unsettled';
  }
}

/** A forward effect that holds or may hold at a stop, not offset: a model call whose intent was recorded. */
function stands(c: CallView, tools: ToolRegistry): boolean {
  if (c.origin !== 'model' || !c.intentRecorded) return false;
  if (c.compensation === 'OFFSET' || c.compensation === 'NOTHING_TO_OFFSET') return false;
  if (tools.get(c.toolName)?.compensation.kind === 'none') return false;
  // SUCCEEDED holds; UNKNOWN may; a dispatched call that is neither (none should be) may too.
  return c.state === 'SUCCEEDED' || c.state === 'UNKNOWN' || (c.dispatches > 0 && !isSettled(c.state));
}

/**
 * A stop other than `completed`: every forward effect still standing is offset (`onAbort: 'compensate'`) or left
 * for an operator (`'leave'`, no compensation declared, or no time left). Records `StandingEffectsSettled` and
 * returns what stands after it, each effect with why, for the stop event.
 */
export async function settleStanding(
  s: {
    readonly ledger: Ledger;
    readonly saga: Saga;
    readonly tools: ToolRegistry;
    readonly onAbort: 'compensate' | 'leave';
    /** Forward calls whose compensation continue-as-new carried, and this worker's tools no longer know. */
    readonly lost: readonly string[];
  },
  reason: StopReason,
  run: (call: ValidatedCall) => Promise<Observation>,
): Promise<StandingSettled> {
  const { ledger, saga, onAbort } = s;
  const standing = Object.values(ledger.projection.calls).filter((c) => stands(c, s.tools));
  if (standing.length === 0) return { left: [], detail: '' };
  const none: SagaOutcome = { offset: [], nothingToOffset: [], unsettled: [], noTime: [] };
  const pass =
    onAbort === 'compensate' && standing.some((c) => saga.covers(c.logicalCallId))
      ? await saga.compensate(ledger.projection.turns, `run stopping: ${reason}`, run)
      : none;
  // What the pass did about the effects that stood (an earlier pass's offsets are that pass's to report).
  const stood = new Set(standing.map((c) => c.logicalCallId));
  const only = (ids: readonly string[]) => ids.filter((id) => stood.has(id));
  const out: SagaOutcome = {
    offset: only(pass.offset),
    nothingToOffset: only(pass.nothingToOffset),
    unsettled: only(pass.unsettled),
    noTime: only(pass.noTime),
  };
  const handled = new Set([...out.offset, ...out.nothingToOffset]);
  const left = standing.filter((c) => !handled.has(c.logicalCallId));
  ledger.append({
    type: 'StandingEffectsSettled',
    stopReason: reason,
    choice: onAbort,
    offset: out.offset,
    nothingToOffset: out.nothingToOffset,
    unsettled: out.unsettled,
    left: left.map((c) => c.logicalCallId).filter((id) => !out.unsettled.includes(id)),
  });
  const leftStanding = left.map((c): LeftStanding => ({
    logicalCallId: c.logicalCallId,
    toolName: c.toolName,
    operationKey: c.operationKey ?? '',
    state: ledger.projection.calls[c.logicalCallId]?.state === 'SUCCEEDED' ? 'SUCCEEDED' : 'UNKNOWN',
    why: whyLeft(c, s, out.noTime),
  }));
  return { left: leftStanding, detail: standingDetail(onAbort, out, leftStanding) };
}

/** Why a standing effect was left for an operator after the pass (`noTime`: the pass ran out of time for it). */
function whyLeft(
  c: CallView,
  s: {
    readonly ledger: Ledger;
    readonly saga: Saga;
    readonly onAbort: 'compensate' | 'leave';
    readonly lost: readonly string[];
  },
  noTime: readonly string[],
): LeftStanding['why'] {
  const now = s.ledger.projection.calls[c.logicalCallId]?.compensation;
  if (now === 'FAILED' || now === 'UNKNOWN') return 'compensation_unsettled';
  if (s.lost.includes(c.logicalCallId)) return 'compensation_lost';
  if (!s.saga.covers(c.logicalCallId)) return c.state === 'SUCCEEDED' ? 'no_compensation' : 'outcome_unknown';
  if (s.onAbort === 'leave') return 'left_by_choice';
  return noTime.includes(c.logicalCallId) ? 'no_time' : 'outcome_unknown';
}

/** The sentence the stop's detail adds about its standing effects. */
function standingDetail(
  onAbort: 'compensate' | 'leave',
  out: SagaOutcome,
  leftStanding: readonly LeftStanding[],
): string {
  const parts = [
    out.offset.length > 0 ? `offset ${out.offset.join(', ')}` : '',
    out.nothingToOffset.length > 0 ? `nothing to offset for ${out.nothingToOffset.join(', ')}` : '',
    leftStanding.length > 0
      ? `left standing for an operator: ${leftStanding.map((l) => `${l.logicalCallId} (${l.toolName}) [${l.state}, ${l.why}]`).join(', ')}`
      : '',
  ].filter((x) => x !== '');
  return `standing effects (onAbort: ${onAbort}): ${parts.join('; ')}`;
}

/** What a stop did about its standing effects: what it leaves for an operator, and the sentence its detail adds. */
export interface StandingSettled {
  readonly left: readonly LeftStanding[];
  readonly detail: string;
}
