/**
 * The local model (packages/local-model) under governed runs: `npm run bench -- --only model`. Not part of the
 * default sections: it installs node-llama-cpp and the weights first (scripts/setup-local-model.sh).
 *
 * Per thread count (the cores, and 1; BENCH_MODEL_THREADS=… to choose; BENCH_MODEL_RUNS=N runs per pass): the server is started on the bench's Temporal server with the wallet
 * scenario's stack (lab/local-model/runs.ts), N runs with seeded goals, then:
 * - from the server's GET /stats, per model request (= per turn): decode tokens per second (tokens after the first
 *   over the time from the first to the last), time to the first token, and the whole request (queue included);
 * - the server's RSS after the runs and its peak (VmRSS, VmHWM);
 * - from the ledgers (lab/local-model/check.ts): proposals valid or rejected, runs completed, stop reasons, and the
 *   check's violations (expected 0: a violation is a defect, not a figure).
 */
import os from 'node:os';
import { checkModelRuns } from '../../local-model/check';
import { totals } from '../../local-model/report';
import { runWalletGoal, startWalletRig, walletEffects, walletGoals, type ModelRun } from '../../local-model/runs';
import { ensureLocalModel, serverStats, startLocalModel } from '../../local-model/server-process';
import { round, summarize, type Summary } from '../lib/stats';
import type { BenchContext } from './common';

export interface LocalModelPass {
  readonly threads: number;
  readonly loadMs: number;
  readonly runs: number;
  readonly seed: number;
  readonly requests: number;
  readonly promptTokens: Summary;
  readonly completionTokens: Summary;
  readonly decodeTokensPerSecond: Summary;
  readonly firstTokenMs: Summary;
  readonly requestMs: Summary;
  readonly rssMb: number;
  readonly peakRssMb: number;
  readonly proposals: number;
  readonly validProposals: number;
  readonly completedRuns: number;
  readonly stopReasons: Readonly<Record<string, number>>;
  readonly violations: number;
  readonly seconds: number;
}

export interface LocalModelFigures {
  readonly model: string;
  readonly loadAverageAtStart: readonly number[];
  readonly passes: readonly LocalModelPass[];
}

export async function measureLocalModel(ctx: BenchContext): Promise<LocalModelFigures> {
  ensureLocalModel();
  const runs = Number(process.env.BENCH_MODEL_RUNS ?? (ctx.quick ? 2 : 5));
  const seed = Number(process.env.BENCH_MODEL_SEED ?? 1);
  const cores = os.availableParallelism();
  // BENCH_MODEL_THREADS=2,1 chooses the passes (default: the cores, then 1).
  const threadCounts = process.env.BENCH_MODEL_THREADS
    ? process.env.BENCH_MODEL_THREADS.split(',').map(Number)
    : [...new Set([cores, 1])];
  const passes: LocalModelPass[] = [];
  let modelId = '';
  const loadAverageAtStart = os.loadavg().map((l) => round(l, 2));
  for (const threads of threadCounts) {
    const t0 = Date.now();
    const model = await startLocalModel({ threads });
    modelId = model.modelId;
    ctx.log(`model: ${model.modelId}, ${threads} thread(s), loaded in ${model.loadMs} ms; ${runs} seeded runs`);
    try {
      const rig = await startWalletRig(model, {
        name: `bench-model-${threads}t`,
        temporal: { address: ctx.stack.server.address, namespace: ctx.stack.server.namespace },
      });
      const done: ModelRun[] = [];
      let effects;
      try {
        for (const [i, goal] of walletGoals(seed, runs).entries()) {
          done.push(await runWalletGoal(rig, `wallet #${i + 1}`, goal));
          ctx.log(`model: ${threads}t run ${i + 1}/${runs}: ${done.at(-1)!.result?.stopReason ?? done.at(-1)!.error}`);
        }
        effects = walletEffects(rig);
      } finally {
        await rig.stop();
      }
      const stats = (await serverStats(model)).filter((s) => s.status === 200);
      const memory = model.memory();
      const t = totals(checkModelRuns(done, effects));
      passes.push({
        threads,
        loadMs: model.loadMs,
        runs,
        seed,
        requests: stats.length,
        promptTokens: summarize(stats.map((s) => s.promptTokens)),
        completionTokens: summarize(stats.map((s) => s.completionTokens)),
        decodeTokensPerSecond: summarize(
          stats
            .filter((s) => s.completionTokens > 1 && s.decodeMs > 0)
            .map((s) => (s.completionTokens - 1) / (s.decodeMs / 1000)),
        ),
        firstTokenMs: summarize(stats.map((s) => s.firstTokenMs)),
        requestMs: summarize(stats.map((s) => s.totalMs)),
        rssMb: memory.rssMb,
        peakRssMb: memory.peakRssMb,
        proposals: t.proposals,
        validProposals: t.valid,
        completedRuns: t.completed,
        stopReasons: t.stopReasons,
        violations: t.violations,
        seconds: Math.round((Date.now() - t0) / 1000),
      });
    } finally {
      await model.stop();
    }
  }
  return { model: modelId, loadAverageAtStart, passes };
}

/** The rows of the figures table for the local model. */
export function localModelRows(f: LocalModelFigures) {
  return f.passes.flatMap((p) => {
    const label = `local model, ${p.threads} thread(s)`;
    return [
      {
        figure: `${label}: decode tokens/s (p50; range)`,
        measured: `${round(p.decodeTokensPerSecond.p50, 1)} (${round(p.decodeTokensPerSecond.min, 1)}–${round(p.decodeTokensPerSecond.max, 1)}) over ${p.requests} turns`,
        target: '—',
        met: null,
      },
      {
        figure: `${label}: latency per turn p50 / p95 (first token p50)`,
        measured: `${round(p.requestMs.p50 / 1000, 2)} s / ${round(p.requestMs.p95 / 1000, 2)} s (${round(p.firstTokenMs.p50 / 1000, 2)} s)`,
        target: '—',
        met: null,
      },
      {
        figure: `${label}: server RSS after the runs (peak)`,
        measured: `${p.rssMb} MB (${p.peakRssMb} MB)`,
        target: '—',
        met: null,
      },
      {
        figure: `${label}: ${p.runs} seeded runs (seed ${p.seed})`,
        measured: `${p.validProposals}/${p.proposals} proposals valid; ${p.completedRuns}/${p.runs} completed; stops ${Object.entries(
          p.stopReasons,
        )
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
        target: '0 violations',
        met: p.violations === 0,
      },
    ];
  });
}
