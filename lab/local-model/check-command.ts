/**
 * `ledgerloop model check` (CI): governed runs planned by the real local model on the wallet scenario and on the
 * examples/ticketing project, then the checker (check.ts) on their records and the services' own databases, then
 * the positive control (the same records with violations planted must fail the checker). Prints one line per run;
 * exits 1 on any violation or any planted violation the checker missed.
 */
import { installRuntimeLogger } from '../../src/observability/logger';
import { checkModelRuns, plantedViolationsMissed } from './check';
import { runLine, totals } from './report';
import {
  DEFAULT_RUN_SETTINGS,
  runTicketingGoals,
  runWalletGoal,
  startWalletRig,
  ticketGoals,
  walletEffects,
  walletGoals,
  walletTaskRows,
  type ModelRun,
} from './runs';
import { ensureLocalModel, startLocalModel } from './server-process';
import { completionRate, taskOutcome, type TaskOutcome } from './tasks';

export interface ModelCheckOptions {
  /** A model id of packages/local-model/weights.json (default: LEDGERLOOP_LOCAL_MODEL_ID, else the small one). */
  readonly model?: string;
  readonly seed: number;
  readonly walletRuns: number;
  readonly ticketingRuns: number;
  readonly threads?: number;
  readonly json: boolean;
}

export async function runModelCheck(o: ModelCheckOptions): Promise<number> {
  const started = Date.now();
  const log = (m: string): void => {
    process.stderr.write(`[model check ${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
  };
  installRuntimeLogger({ component: 'model-check', level: 'WARN', format: 'text' });
  ensureLocalModel(o.model);
  const model = await startLocalModel({
    ...(o.model !== undefined ? { model: o.model } : {}),
    ...(o.threads !== undefined ? { threads: o.threads } : {}),
  });
  log(`local model ${model.modelId} at ${model.baseUrl}: ${model.threads} thread(s), loaded in ${model.loadMs} ms`);
  const runs: ModelRun[] = [];
  try {
    const rig = await startWalletRig(model, { name: 'model-check', onProgress: log });
    let effects;
    const outcomes: TaskOutcome[] = [];
    try {
      for (const [i, goal] of walletGoals(o.seed, o.walletRuns).entries()) {
        log(`wallet #${i + 1}: ${goal.text}`);
        runs.push(await runWalletGoal(rig, `wallet #${i + 1}`, goal, DEFAULT_RUN_SETTINGS));
      }
      const walletRows = walletTaskRows(rig);
      outcomes.push(...runs.map((r) => taskOutcome(r, walletRows)));
      const ticketing = await runTicketingGoals(
        model,
        { address: rig.stack.server.address, namespace: rig.stack.server.namespace },
        ticketGoals(o.seed, o.ticketingRuns),
        DEFAULT_RUN_SETTINGS,
        log,
      );
      runs.push(...ticketing.runs);
      outcomes.push(...ticketing.runs.map((r) => taskOutcome(r, ticketing.taskRows)));
      effects = [...walletEffects(rig), ...ticketing.effects];
    } finally {
      await rig.stop();
    }
    const report = checkModelRuns(runs, effects);
    const control = plantedViolationsMissed(runs, effects);
    const memory = model.memory();
    const t = totals(report);
    const rate = completionRate(outcomes);
    if (o.json) {
      process.stdout.write(
        `${JSON.stringify({ model: model.modelId, seed: o.seed, seconds: Math.round((Date.now() - started) / 1000), memory, totals: t, tasks: { ...rate, outcomes }, runs: report.runs, violations: report.violations, positiveControl: control })}\n`,
      );
    } else {
      report.runs.forEach((s, i) =>
        process.stdout.write(`${runLine(s)}; task ${outcomes[i]!.done ? 'done' : 'not done'}: ${outcomes[i]!.why}\n`),
      );
      for (const v of report.violations.filter((x) => x.run === ''))
        process.stdout.write(`!! ${v.check}: ${v.message}\n`);
      process.stdout.write(
        `model check (${model.modelId}, seed ${o.seed}): ${t.runs} runs (${t.completed} completed; stops ${JSON.stringify(t.stopReasons)}), ` +
          `tasks done ${rate.done} of ${rate.of} (judged on the services' own databases), ` +
          `${t.proposals} proposals (${t.valid} valid, ${t.rejected} rejected), ${t.violations} violation(s); ` +
          `positive control: ${3 - control.missed.length - control.notPlantable.length} of 3 planted violations caught` +
          `${control.notPlantable.length > 0 ? ` (not plantable: ${control.notPlantable.join('; ')})` : ''}; ` +
          `server RSS ${memory.rssMb} MB (peak ${memory.peakRssMb} MB); ${Math.round((Date.now() - started) / 1000)} s\n`,
      );
    }
    for (const m of control.missed) process.stderr.write(`!! the checker missed a planted violation: ${m}\n`);
    return report.violations.length > 0 || control.missed.length > 0 ? 1 : 0;
  } finally {
    await model.stop();
  }
}
