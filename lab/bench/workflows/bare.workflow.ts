/**
 * The bare baseline of the benchmarks: the same agent-shaped loop as agentRun (one model call, then one tool
 * call, per turn) with every governance step taken out. No validation, no canonical hashing, no authorization,
 * no recorded intent, no ledger, no search attributes, no result validation: the workflow parses the proposal,
 * builds the wallet body and hands it to one activity under a fresh key. The downstream work (one signed debit
 * per call) is the same as the governed path's.
 */
import { patched, proxyActivities, proxyLocalActivities, upsertSearchAttributes, uuid4 } from '@temporalio/workflow';
import { SA } from '../../../src/domain/search-attributes';
import type { BareActivities, BareCallResult } from '../bare.activities';

export interface BareLoopInput {
  readonly tenant: string;
  readonly principalId: string;
  readonly account: string;
  /** Debit turns before the final answer (the `n-debits` scenario's `turns`). */
  readonly turns: number;
  /** `single`: one HTTP request per activity attempt. `stacked`: an SDK-style client retrying inside it. */
  readonly clientRetries: 'single' | 'stacked';
  /** Deadline of the whole loop, ISO 8601 (sets the activity timeouts as the governed presets do). */
  readonly deadlineAt: string;
  /**
   * Ablations (lab/bench/sections/profile.ts): add ONE of the governed path's costs to the bare loop, to price it
   * alone. `upsertsPerCall`: search-attribute upserts around each call (agentRun publishes twice per turn).
   * `localActivityPerCall`: a no-op local activity before each call (agentRun authorizes in one).
   * `activityAtStart`: one no-op activity before the first model call: the round trip agentRun's identity check
   * takes (that activity's own work, verifying a token, is not in it); `localActivityAtStart`: the same as a local
   * activity (recorded as one marker, no server round trip). `patchesAtStart`: versioning markers a new
   * run records at its opening (a new agentRun passes three `patched()` checks there). `asyncStepsPerTurn`: that
   * many empty async functions called and awaited in each turn, between the model call and the tool call: the
   * promises the governed loop's async steps (prepare, decide, record, ...) make and the bare loop does not, with
   * none of their work. `evidenceBytesPerCall`: bytes of padding per call, split in three (the model's response,
   * the tool call's input and its result carry a third each), to price what the SDK and the server charge for the
   * evidence a governed run records (the identity check, intent, keys, hashes, capability, receipt) without the
   * work that makes it.
   */
  readonly upsertsPerCall?: number;
  readonly localActivityPerCall?: boolean;
  readonly activityAtStart?: boolean;
  readonly localActivityAtStart?: boolean;
  readonly patchesAtStart?: number;
  readonly asyncStepsPerTurn?: number;
  readonly evidenceBytesPerCall?: number;
}

export interface BareLoopResult {
  readonly turns: number;
  readonly calls: readonly BareCallResult[];
}

/** An async step with no work: one promise made and awaited (the `asyncStepsPerTurn` ablation). */
async function emptyStep(): Promise<void> {}

// The same retry shape as the governed presets (src/domain/activity-presets.ts): 3 attempts, 200 ms doubling.
const retry = { maximumAttempts: 3, initialInterval: 200, backoffCoefficient: 2, maximumInterval: 2_000 };

export async function bareLoop(input: BareLoopInput): Promise<BareLoopResult> {
  const { barePlan } = proxyActivities<BareActivities>({ startToCloseTimeout: '30s', retry });
  const { bareDebit } = proxyActivities<BareActivities>({
    startToCloseTimeout: '10s',
    retry: { ...retry, nonRetryableErrorTypes: ['Bare.Rejected'] },
  });
  const { bareCheck } = proxyLocalActivities<BareActivities>({ startToCloseTimeout: '5s' });
  const opening = proxyActivities<BareActivities>({ startToCloseTimeout: '10s', retry });
  const upsert = (): void => {
    upsertSearchAttributes([
      { key: SA.status, value: 'running' },
      { key: SA.unknownCalls, value: 0 },
      { key: SA.pendingApprovals, value: 0 },
    ]);
  };
  const upserts = input.upsertsPerCall ?? 0;
  const calls: BareCallResult[] = [];
  for (let i = 0; i < (input.patchesAtStart ?? 0); i++) patched(`bench-ablation-${i}`);
  if (input.activityAtStart) await opening.bareCheck({ key: 'opening' });
  if (input.localActivityAtStart) await bareCheck({ key: 'opening' });
  const pad = Math.floor((input.evidenceBytesPerCall ?? 0) / 3);
  for (let turn = 1; ; turn++) {
    const plan = await barePlan({
      turn,
      account: input.account,
      turns: input.turns,
      ...(pad ? { padBytes: pad } : {}),
    });
    if (plan.kind === 'final') return { turns: turn - 1, calls };
    for (let i = 0; i < (input.asyncStepsPerTurn ?? 0); i++) await emptyStep();
    for (const p of plan.proposals) {
      const args = JSON.parse(p.argumentsJson) as { account: string; amount: { minor: number; currency: string } };
      const body = { tenant: input.tenant, account: args.account, amount: args.amount };
      const key = `bare_${uuid4()}`;
      if (upserts > 0) upsert();
      if (input.localActivityPerCall) await bareCheck({ key });
      try {
        // The padding came back in the result; the run's own result leaves it out, as agentRun's carries no evidence.
        const { pad: _padding, ...call } = await bareDebit({
          key,
          body,
          principalId: input.principalId,
          clientRetries: input.clientRetries,
          ...(pad ? { pad: 'x'.repeat(pad), padResultBytes: pad } : {}),
        });
        calls.push(call);
      } catch {
        calls.push({ ok: false, key });
      }
      for (let i = 1; i < upserts; i++) upsert();
    }
  }
}
