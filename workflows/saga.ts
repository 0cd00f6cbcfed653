/**
 * Saga compensation. A compensation is a new governed effect (its own operation key, a fresh authorization at
 * dispatch, a deadline-bounded retry policy, reconciliation, an outcome in the ledger), never a rollback.
 * It is registered before its forward call is dispatched, so a forward effect left UNKNOWN is still covered:
 * compensations name the forward effect by its operation key, and the downstream refuses, with no effect and
 * a sealed forward key, to offset something that never happened.
 */
import type { Observation } from '../src/domain/activity-contracts';
import { hashCanonical } from '../src/domain/canonical';
import { deriveOperationKey } from '../src/domain/identity';
import type { DispatchContext } from '../src/domain/tool';
import type { ToolRegistry } from '../src/tools/registry';
import type { Ledger } from './ledger';
import type { ValidatedCall } from './proposals';

interface Registered {
  readonly forward: ValidatedCall;
  readonly compensation: ValidatedCall;
}

export interface SagaOutcome {
  readonly offset: readonly string[];
  readonly nothingToOffset: readonly string[];
  /** Compensations that failed or whose outcome stayed UNKNOWN: an operator must act. */
  readonly unsettled: readonly string[];
}

export class Saga {
  private readonly registered: Registered[] = [];

  constructor(
    private readonly ledger: Ledger,
    private readonly tools: ToolRegistry,
    private readonly runId: string,
    private readonly who: DispatchContext,
  ) {}

  get size(): number {
    return this.registered.length;
  }

  /** Declare how `forward` would be offset. Pure apart from the ledger append; called before its dispatch. */
  register(forward: ValidatedCall): void {
    const plan = forward.tool.compensation;
    if (plan.kind !== 'compensate' || forward.origin !== 'model') return;
    const tool = this.tools.get(plan.tool);
    if (tool === undefined) throw new Error(`${forward.tool.name} names an unknown compensation tool ${plan.tool}`);
    const args = tool.args.parse(plan.args({ args: forward.args, operationKey: forward.operationKey }));
    const body = tool.canonicalize(args, this.who);
    const argumentsHash = hashCanonical(body);
    const operationKey = deriveOperationKey({
      tenant: this.who.tenant,
      runId: this.runId,
      toolName: tool.name,
      toolVersion: tool.version,
      argumentsHash,
      occurrence: 0,
    });
    const logicalCallId = `cmp_${forward.logicalCallId}`;
    this.ledger.append({
      type: 'CompensationRegistered',
      forwardCallId: forward.logicalCallId,
      compensationCallId: logicalCallId,
      toolName: tool.name,
      operationKey,
      argumentsHash,
    });
    this.registered.push({
      forward,
      compensation: { tool, args, body, logicalCallId, providerCallId: 'saga', operationKey, argumentsHash, origin: 'compensation' },
    });
  }

  /**
   * Offset every registered effect whose forward call SUCCEEDED or is UNKNOWN, newest first. `run` dispatches
   * one compensation through the full pipeline (authorization at dispatch included).
   */
  async compensate(turn: number, reason: string, run: (call: ValidatedCall) => Promise<Observation>): Promise<SagaOutcome> {
    const out = { offset: [] as string[], nothingToOffset: [] as string[], unsettled: [] as string[] };
    for (const { forward, compensation } of [...this.registered].reverse()) {
      const state = this.ledger.projection.calls[forward.logicalCallId]?.state;
      if (state !== 'SUCCEEDED' && state !== 'UNKNOWN') continue;
      const ids = { forwardCallId: forward.logicalCallId, compensationCallId: compensation.logicalCallId };
      this.ledger.append({ type: 'CompensationStarted', ...ids, reason });
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
      const obs = await run(compensation);
      const absent = obs.state === 'FAILED' && (compensation.tool.forwardAbsentReasons ?? []).includes(obs.error?.code ?? '');
      if (obs.state === 'SUCCEEDED') {
        this.ledger.append({ type: 'CompensationCompleted', ...ids, outcome: 'OFFSET', detail: `${compensation.tool.name} offset ${forward.tool.name}` });
        out.offset.push(forward.logicalCallId);
      } else if (absent) {
        this.ledger.append({ type: 'CompensationCompleted', ...ids, outcome: 'NOTHING_TO_OFFSET', detail: `${forward.tool.name} never took effect; its key is sealed` });
        if (state === 'UNKNOWN') {
          this.ledger.append({ type: 'ToolEffectReconciled', logicalCallId: forward.logicalCallId, via: 'compensation', outcome: 'FAILED', detail: 'the downstream holds no effect under the key and sealed it' });
        }
        out.nothingToOffset.push(forward.logicalCallId);
      } else {
        const detail = `${compensation.tool.name} ${obs.state}: ${obs.error?.code ?? ''} ${obs.error?.message ?? ''}`.trim();
        this.ledger.append({ type: 'CompensationCompleted', ...ids, outcome: obs.state === 'UNKNOWN' ? 'UNKNOWN' : 'FAILED', detail });
        out.unsettled.push(forward.logicalCallId);
      }
    }
    return out;
  }
}
