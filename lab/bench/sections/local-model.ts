/**
 * The local model (packages/local-model) under governed runs: `npm run bench -- --only model`. Not part of the
 * default sections: it installs node-llama-cpp and the weights first (scripts/setup-local-model.sh).
 *
 * Per model (BENCH_MODELS=id,…; default: the small default model and Qwen2.5-Coder-1.5B-Instruct) and per thread
 * count (BENCH_MODEL_THREADS=…; default: the cores, then 1): the server is started on the bench's Temporal server,
 * and the SAME scenario set runs on each pass: BENCH_MODEL_RUNS wallet goals (the wallet scenario's stack,
 * lab/local-model/runs.ts) and BENCH_MODEL_TICKETING_RUNS examples/ticketing goals, drawn from BENCH_MODEL_SEED. Then:
 * - from the server's GET /stats, per model request (= per turn): decode tokens per second (tokens after the first
 *   over the time from the first to the last), time to the first token, and the whole request (queue included);
 * - the server's RSS after the runs and its peak (VmRSS, VmHWM);
 * - from the ledgers (lab/local-model/check.ts): proposals valid or rejected, runs completed, stop reasons, and the
 *   check's violations (expected 0: a violation is a defect, not a figure);
 * - the completion rate: tasks done, judged on the services' own databases (lab/local-model/tasks.ts): the effect
 *   the goal asked for, once, under the run's intent, nothing else, and a `completed` stop.
 */
import os from 'node:os';
import { checkModelRuns } from '../../local-model/check';
import { totals } from '../../local-model/report';
import {
  runTicketingGoals,
  runWalletGoal,
  startWalletRig,
  ticketGoals,
  walletEffects,
  walletGoals,
  walletTaskRows,
  type ModelRun,
} from '../../local-model/runs';
import { ensureLocalModel, localModelPin, serverStats, startLocalModel } from '../../local-model/server-process';
import { completionRate, taskOutcome, type TaskOutcome } from '../../local-model/tasks';
import { round, summarize, type Summary } from '../lib/stats';
import type { BenchContext } from './common';

/** The larger model the bench sets beside the default one. */
export const LARGER_MODEL = 'qwen2.5-coder-1.5b-instruct';

export interface LocalModelPass {
  readonly model: string;
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
  /** Tasks done, judged on the services' own databases. */
  readonly tasksDone: number;
  readonly tasks: readonly { readonly name: string; readonly done: boolean; readonly why: string }[];
  readonly violations: number;
  readonly seconds: number;
  readonly loadAverageAtStart: readonly number[];
}

export interface LocalModelFigures {
  readonly models: readonly string[];
  readonly passes: readonly LocalModelPass[];
}

const list = (v: string | undefined): string[] | undefined =>
  v
    ? v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : undefined;

export async function measureLocalModel(ctx: BenchContext): Promise<LocalModelFigures> {
  const models = (list(process.env.BENCH_MODELS) ?? [localModelPin().id, LARGER_MODEL]).map((m) => localModelPin(m).id);
  const walletRuns = Number(process.env.BENCH_MODEL_RUNS ?? (ctx.quick ? 2 : 5));
  const ticketingRuns = Number(process.env.BENCH_MODEL_TICKETING_RUNS ?? (ctx.quick ? 1 : 2));
  const seed = Number(process.env.BENCH_MODEL_SEED ?? 1);
  const cores = os.availableParallelism();
  const threadCounts = list(process.env.BENCH_MODEL_THREADS)?.map(Number) ?? [...new Set([cores, 1])];
  const temporal = { address: ctx.stack.server.address, namespace: ctx.stack.server.namespace };
  const passes: LocalModelPass[] = [];
  for (const modelId of [...new Set(models)]) {
    ensureLocalModel(modelId);
    for (const threads of threadCounts) {
      const t0 = Date.now();
      const loadAverageAtStart = os.loadavg().map((l) => round(l, 2));
      const model = await startLocalModel({ model: modelId, threads });
      ctx.log(
        `model: ${model.modelId}, ${threads} thread(s), loaded in ${model.loadMs} ms; ${walletRuns} wallet and ${ticketingRuns} ticketing runs (seed ${seed})`,
      );
      try {
        const done: ModelRun[] = [];
        const outcomes: TaskOutcome[] = [];
        const rig = await startWalletRig(model, { name: `bench-model-${threads}t`, temporal });
        let effects;
        try {
          for (const [i, goal] of walletGoals(seed, walletRuns).entries()) {
            done.push(await runWalletGoal(rig, `wallet #${i + 1}`, goal));
            ctx.log(
              `model: ${modelId} ${threads}t wallet ${i + 1}/${walletRuns}: ${done.at(-1)!.result?.stopReason ?? done.at(-1)!.error}`,
            );
          }
          const rows = walletTaskRows(rig);
          outcomes.push(...done.map((r) => taskOutcome(r, rows)));
          effects = walletEffects(rig);
        } finally {
          await rig.stop();
        }
        if (ticketingRuns > 0) {
          const ticketing = await runTicketingGoals(model, temporal, ticketGoals(seed, ticketingRuns));
          done.push(...ticketing.runs);
          outcomes.push(...ticketing.runs.map((r) => taskOutcome(r, ticketing.taskRows)));
          effects = [...effects, ...ticketing.effects];
        }
        const stats = (await serverStats(model)).filter((s) => s.status === 200);
        const memory = model.memory();
        const t = totals(checkModelRuns(done, effects));
        passes.push({
          model: modelId,
          threads,
          loadMs: model.loadMs,
          runs: done.length,
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
          tasksDone: completionRate(outcomes).done,
          tasks: done.map((r, i) => ({ name: r.name, done: outcomes[i]!.done, why: outcomes[i]!.why })),
          violations: t.violations,
          seconds: Math.round((Date.now() - t0) / 1000),
          loadAverageAtStart,
        });
        const last = passes.at(-1)!;
        ctx.log(`model: ${modelId} ${threads}t: tasks done ${last.tasksDone} of ${last.runs}`);
      } finally {
        await model.stop();
      }
    }
  }
  return { models, passes };
}

/** The rows of the figures table for the local model. */
export function localModelRows(f: LocalModelFigures) {
  return f.passes.flatMap((p) => {
    const label = `local model ${p.model}, ${p.threads} thread(s) (load ${p.loadAverageAtStart[0]} at the start)`;
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
        figure: `${label}: completion rate on the scenario set (seed ${p.seed})`,
        measured: `${p.tasksDone}/${p.runs} tasks done (the effect in the services' own databases, nothing else, completed)`,
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
