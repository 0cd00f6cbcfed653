/**
 * Figure 5: retry amplification. The wallet fails requests on a fixed pattern (`error_5xx` before commit, so a
 * failed request commits nothing), armed as FaultRules: each rule counts the mutating requests after it was
 * armed and fails exactly its `occurrence`-th. The same pattern is re-armed before each setup:
 *
 *   - Ledgerloop: the governed run, Temporal the single retry owner (3 attempts), the HTTP client never retries;
 *   - stacked naive: the bare loop whose activity uses an SDK-style client retrying 3 attempts itself, inside
 *     an activity Temporal also retries 3 attempts (at most 9 requests per logical call).
 *
 * Requests per logical call are counted from the wallet's own request log (`GET /admin/stats?key=`, one row
 * per request received), and compared with the attempts the Temporal history shows.
 */
import { attemptsByActivity } from '../lib/history';
import { runLoop, type Kind } from '../lib/runs';
import { account } from '../lib/stack';
import { mean, prng, round } from '../lib/stats';
import { startPair } from '../lib/workers';
import type { AgentRunResult } from '../../../src/domain/run';
import type { BareLoopResult } from '../workflows/bare.workflow';
import { DEFAULT_TUNING, type BenchContext } from './common';

export type FaultPattern = 'alternating' | 'random-50' | 'outage';

export interface RetryCase {
  readonly pattern: FaultPattern;
  readonly setup: 'ledgerloop' | 'stacked';
  readonly logicalCalls: number;
  /** Requests the wallet received per logical call, in call order. */
  readonly requests: readonly number[];
  readonly meanRequests: number;
  readonly maxRequests: number;
  /** Logical calls never sent (Ledgerloop: refused while the wallet's circuit breaker was open). */
  readonly notSent: number;
  /** Temporal attempts per logical call as the history records them. */
  readonly historyAttempts: readonly number[];
  /** Calls that ended with the effect committed. */
  readonly succeeded: number;
  /** Ledgerloop only: reconciliation lookups (GET by key, never a new effect) after retries ran out. */
  readonly reconcileLookups?: number;
}

export interface RetryFigures {
  readonly cases: readonly RetryCase[];
  readonly ratios: readonly { readonly pattern: FaultPattern; readonly stackedOverLedgerloop: number }[];
}

const PATTERNS: readonly FaultPattern[] = ['alternating', 'random-50', 'outage'];

/** Logical calls per pattern and mode: enough to see the pattern, few enough for the 15-minute budget. */
const LOGICAL_CALLS: Readonly<Record<FaultPattern, { readonly quick: number; readonly full: number }>> = {
  alternating: { quick: 6, full: 8 },
  'random-50': { quick: 8, full: 12 },
  outage: { quick: 3, full: 4 },
};

async function armPattern(ctx: BenchContext, pattern: FaultPattern, maxRequests: number): Promise<number> {
  const w = ctx.stack.walletClient;
  await w.clearFaults();
  if (pattern === 'outage') {
    await w.armFault({ at: 'before_commit', do: 'error_5xx', path: '/v1/debits', occurrence: 1, times: 1_000_000 });
    return 1;
  }
  const random = prng(20_261_130);
  let armed = 0;
  for (let i = 1; i <= maxRequests; i++) {
    const fail = pattern === 'alternating' ? i % 2 === 1 : random() < 0.5;
    if (!fail) continue;
    await w.armFault({ at: 'before_commit', do: 'error_5xx', path: '/v1/debits', occurrence: i, times: 1 });
    armed += 1;
  }
  return armed;
}

export async function measureRetries(ctx: BenchContext): Promise<RetryFigures> {
  const { stack } = ctx;
  const workers = await startPair(ctx, 'retries', DEFAULT_TUNING);
  const cases: RetryCase[] = [];
  try {
    for (const pattern of PATTERNS) {
      const calls = LOGICAL_CALLS[pattern][ctx.quick ? 'quick' : 'full'];
      for (const setup of ['ledgerloop', 'stacked'] as const) {
        await armPattern(ctx, pattern, calls * 9 + 10);
        const kind: Kind = setup === 'ledgerloop' ? 'governed' : 'bare';
        const id = `bench-retry-${pattern}-${setup}-${ctx.stamp}`;
        const handle = (
          await runLoop(stack.client, kind, workers.tq(kind), id, {
            turns: calls,
            account: account(7),
            // A failed call is reported to the model so one run makes every logical call of the pattern.
            ...(setup === 'stacked'
              ? { clientRetries: 'stacked' as const }
              : { onToolFailure: 'report_to_model' as const }),
          })
        ).handle;
        await stack.walletClient.clearFaults();
        const result = (await handle.result()) as AgentRunResult | BareLoopResult;
        const history = await handle.fetchHistory();
        let keys: string[];
        let succeeded: number;
        if (kind === 'governed') {
          const r = result as AgentRunResult;
          keys = r.calls.map((c) => c.operationKey ?? '');
          succeeded = r.calls.filter((c) => c.state === 'SUCCEEDED').length;
        } else {
          const r = result as BareLoopResult;
          keys = r.calls.map((c) => c.key);
          succeeded = r.calls.filter((c) => c.ok).length;
        }
        const requests: number[] = [];
        for (const key of keys) requests.push(key ? (await stack.walletClient.stats(key)).dispatchCount : 0);
        const historyAttempts = attemptsByActivity(history, kind === 'governed' ? 'dispatchTool' : 'bareDebit');
        const c: RetryCase = {
          pattern,
          setup,
          logicalCalls: keys.length,
          requests,
          meanRequests: round(mean(requests), 2),
          maxRequests: Math.max(...requests),
          notSent: requests.filter((n) => n === 0).length,
          historyAttempts,
          succeeded,
          ...(kind === 'governed'
            ? { reconcileLookups: attemptsByActivity(history, 'reconcileCall').reduce((a, b) => a + b, 0) }
            : {}),
        };
        cases.push(c);
        ctx.log(
          `retries ${pattern} ${setup}: ${c.meanRequests} requests per logical call (max ${c.maxRequests}; history shows ` +
            `${round(mean(historyAttempts), 2)} attempts), ${succeeded}/${keys.length} succeeded, ${c.notSent} not sent`,
        );
      }
    }
  } finally {
    await stack.walletClient.clearFaults();
    await workers.stop();
  }
  const ratios = PATTERNS.map((pattern) => {
    const l = cases.find((c) => c.pattern === pattern && c.setup === 'ledgerloop')!;
    const s = cases.find((c) => c.pattern === pattern && c.setup === 'stacked')!;
    return { pattern, stackedOverLedgerloop: round(s.meanRequests / l.meanRequests) };
  });
  return { cases, ratios };
}
