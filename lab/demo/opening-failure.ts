/**
 * The essay's opening failure, for real: the wallet commits a debit, the worker process is SIGKILLed before the
 * activity reports, a new worker process takes over. Run once per retry strategy; every figure is read from a
 * durable record: attempts from the Temporal history, dispatches and effects from the wallet's own database.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { activityAttempts } from '../../host/client/history-metrics';
import { readLedger, startAgentRun } from '../../host/client/runs';
import type { RetryStrategy } from '../../src/domain/run';
import { LAB_STRATEGIES } from '../strategies';
import { spawnWorker, type SpawnWorkerOptions, type WorkerProcess } from '../spawn-worker';
import type { Stack } from '../stack';

export interface DemoRow {
  readonly strategy: RetryStrategy;
  /** Temporal attempts of the tool dispatch, from the history. */
  readonly attempts: number;
  /** Requests the wallet received for this intent, from its database. */
  readonly dispatches: number;
  /** Debits the wallet committed for this intent, from its database. */
  readonly effects: number;
  readonly finalState: string;
  /** The projection hash the first worker held just before it was killed. */
  readonly projectionHashBefore: string;
  /** The same projection rebuilt by the second worker from the history (replay). */
  readonly projectionHashAfter: string;
  readonly workflowId: string;
  readonly stopReason: string;
}

export interface OpeningFailureOptions {
  readonly strategy: RetryStrategy;
  readonly taskQueue: string;
  readonly workflowId?: string;
  readonly tenant?: string;
  readonly account?: string;
  readonly onProgress?: (message: string) => void;
  /**
   * Where worker `n` (1: the one killed, 2: the one that takes over) runs: a cluster gives each its own host
   * (working directory, bundle and configuration files). Default: the repository, the stack's files.
   */
  readonly workerHost?: (n: number) => Partial<SpawnWorkerOptions>;
  /** Called after the first worker was killed, before the second starts (a cluster restarts its server here). */
  readonly afterWorkerKill?: () => Promise<void>;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch {
      /* not ready yet */
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export async function runOpeningFailure(stack: Stack, opts: OpeningFailureOptions): Promise<DemoRow> {
  const say = opts.onProgress ?? (() => {});
  const tenant = opts.tenant ?? 'acme';
  const account = opts.account ?? `acct_${opts.strategy}`;
  const workflowId = opts.workflowId ?? `opening-failure-${opts.strategy}-${Date.now()}`;
  const workerOpts = {
    address: stack.server.address,
    taskQueue: opts.taskQueue,
    services: { wallet: stack.wallet.url },
    workflowBundlePath: stack.bundlePath,
    env: stack.workerEnv,
  };
  await stack.walletClient.seedAccount({ tenant, account, balanceMinor: 100_00, currency: 'EUR' });
  // The wallet commits the next debit, then holds its response: the window in which the worker dies.
  await stack.walletClient.armFault({ at: 'after_commit', do: 'delay', ms: 60_000, path: '/v1/debits', occurrence: 1 });

  const host = (n: number): SpawnWorkerOptions => ({ ...workerOpts, ...opts.workerHost?.(n) });
  let first: WorkerProcess | undefined = await spawnWorker(host(1));
  let second: WorkerProcess | undefined;
  try {
    say(`${opts.strategy}: worker ${first.pid} started; starting run ${workflowId}`);
    const handle = await startAgentRun(stack.client, {
      workflowId,
      taskQueue: opts.taskQueue,
      identityToken: await stack.identity.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', tenant),
      input: {
        principal: { id: 'user:alice', tenant },
        goal: 'Charge 12.50 EUR for order 1001',
        strategy: opts.strategy,
        planner: {
          kind: 'scripted',
          scenario: 'wallet-debit',
          vars: { account, amount: { minor: 1250, currency: 'EUR' } },
        },
        deadlineAt: new Date(Date.now() + 120_000).toISOString(),
        caps: { toolAttemptMs: 3_000 },
      },
    });
    const operationKey = await until('the dispatch intent', async () => {
      const snap = await readLedger(handle);
      const intent = snap.events.find((e) => e.type === 'DispatchIntentRecorded');
      return intent && intent.type === 'DispatchIntentRecorded' ? intent.intent.operationKey : undefined;
    });
    await until('the wallet to commit the debit', async () => {
      const s = await stack.walletClient.stats(operationKey, { prefix: true });
      return s.businessEffectCount >= 1 ? s : undefined;
    });
    const before = await readLedger(handle);
    say(
      `${opts.strategy}: the wallet committed ${operationKey.slice(0, 14)}…; SIGKILL worker ${first.pid} before it reports`,
    );
    await first.signal('SIGKILL');
    first = undefined;
    await opts.afterWorkerKill?.();

    second = await spawnWorker(host(2));
    say(`${opts.strategy}: worker ${second.pid} took over; waiting for the run to finish`);
    const result = await handle.result();
    const after = await readLedger(handle, before.eventCount);
    const history = await handle.fetchHistory();
    const attempts = activityAttempts(history)
      .filter((a) => a.activityType === 'dispatchTool')
      .reduce((n, a) => n + a.attempts, 0);
    const stats = await stack.walletClient.stats(operationKey, { prefix: true });
    const call = result.calls.find((c) => c.operationKey === operationKey);
    return {
      strategy: opts.strategy,
      attempts,
      dispatches: stats.dispatchCount,
      effects: stats.businessEffectCount,
      finalState: call?.state ?? 'MISSING',
      projectionHashBefore: before.projectionHash,
      projectionHashAfter: after.projectionHash,
      workflowId,
      stopReason: result.stopReason,
    };
  } finally {
    await first?.signal('SIGKILL');
    await second?.stop();
    await stack.walletClient.clearFaults();
  }
}

/**
 * The opening failure once per retry strategy, in order, on one task queue and workflow ids named `<prefix>-...`
 * (each run's workers are gone before the next starts).
 * `perStrategy` adds options for one strategy's run (a cluster's worker hosts and server restart).
 */
/** The naive loop first, then the runtime's two: the table reads as the failure and then its fixes. */
const DEMO_STRATEGIES: readonly RetryStrategy[] = [...LAB_STRATEGIES, 'check_receipt', 'same_key_replay'];

export async function runEveryStrategy(
  stack: Stack,
  opts: {
    readonly prefix: string;
    /** The one task queue of the three runs (they run one after the other); default `<prefix>-opening-failure-<ms>`. */
    readonly taskQueue?: string;
    readonly onProgress?: (message: string) => void;
    readonly perStrategy?: (strategy: RetryStrategy) => Pick<OpeningFailureOptions, 'workerHost' | 'afterWorkerKill'>;
  },
): Promise<DemoRow[]> {
  const rows: DemoRow[] = [];
  const stamp = Date.now();
  for (const strategy of DEMO_STRATEGIES) {
    rows.push(
      await runOpeningFailure(stack, {
        strategy,
        taskQueue: opts.taskQueue ?? `${opts.prefix}-opening-failure-${stamp}`,
        workflowId: `${opts.prefix === 'demo' ? '' : `${opts.prefix}-`}opening-failure-${strategy}-${stamp}`,
        ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
        ...opts.perStrategy?.(strategy),
      }),
    );
  }
  return rows;
}
