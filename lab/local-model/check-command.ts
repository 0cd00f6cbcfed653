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
  type ModelRun,
} from './runs';
import { ensureLocalModel, startLocalModel } from './server-process';

export interface ModelCheckOptions {
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
  ensureLocalModel();
  const model = await startLocalModel({ ...(o.threads !== undefined ? { threads: o.threads } : {}) });
  log(`local model ${model.modelId} at ${model.baseUrl}: ${model.threads} thread(s), loaded in ${model.loadMs} ms`);
  const runs: ModelRun[] = [];
  try {
    const rig = await startWalletRig(model, { name: 'model-check', onProgress: log });
    let effects;
    try {
      for (const [i, goal] of walletGoals(o.seed, o.walletRuns).entries()) {
        log(`wallet #${i + 1}: ${goal}`);
        runs.push(await runWalletGoal(rig, `wallet #${i + 1}`, goal, DEFAULT_RUN_SETTINGS));
      }
      const ticketing = await runTicketingGoals(
        model,
        { address: rig.stack.server.address, namespace: rig.stack.server.namespace },
        ticketGoals(o.seed, o.ticketingRuns),
        DEFAULT_RUN_SETTINGS,
        log,
      );
      runs.push(...ticketing.runs);
      effects = [...walletEffects(rig), ...ticketing.effects];
    } finally {
      await rig.stop();
    }
    const report = checkModelRuns(runs, effects);
    const control = plantedViolationsMissed(runs, effects);
    const memory = model.memory();
    const t = totals(report);
    if (o.json) {
      process.stdout.write(
        `${JSON.stringify({ seed: o.seed, seconds: Math.round((Date.now() - started) / 1000), memory, totals: t, runs: report.runs, violations: report.violations, positiveControl: control })}\n`,
      );
    } else {
      for (const s of report.runs) process.stdout.write(`${runLine(s)}\n`);
      for (const v of report.violations.filter((x) => x.run === ''))
        process.stdout.write(`!! ${v.check}: ${v.message}\n`);
      process.stdout.write(
        `model check (seed ${o.seed}): ${t.runs} runs (${t.completed} completed; stops ${JSON.stringify(t.stopReasons)}), ` +
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
