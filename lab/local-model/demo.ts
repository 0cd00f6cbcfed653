/**
 * `npm start -- --model local` (`ledgerloop demo --model local`): instead of the scripted opening-failure demo, a
 * real model drives governed runs. The local model server (SmolLM2-135M-Instruct, set up by
 * scripts/setup-local-model.sh, checked against its pinned SHA-256), a headless Temporal dev server, the five
 * simulated services and a worker process that reaches the model through OPENAI_BASE_URL, as it would a hosted
 * provider. Two wallet runs; for each, what the model proposed (its raw arguments), what the validation pipeline
 * made of each proposal, the stop, the effects in the services' own databases, and the check of the promise.
 * Exits 1 when the check finds a violation. Unless `--once`, the stack stays up for runs of your own.
 */
import path from 'node:path';
import { EXIT_USAGE } from '../../cli/errors';
import { DATA_DIR } from '../../host/server/temporal-binaries';
import { DEFAULT_ADDRESS } from '../../host/server/connection-config';
import { DEPLOYMENT_TASK_QUEUE } from '../cluster/versions';
import { prepareFirstRun } from '../demo/first-run';
import { spawnWorker } from '../spawn-worker';
import { checkModelRuns } from './check';
import { describeRun, totals } from './report';
import { runWalletGoal, startWalletRig, walletEffects, walletGoal, walletTaskRows, type ModelRun } from './runs';
import { ensureLocalModel, startLocalModel } from './server-process';
import { completionRate, taskOutcome } from './tasks';

/** The demo's goals: the issue's example. No order number: with one, this model tends to mark the order fulfilled. */
export const DEMO_GOALS = [walletGoal(1250, 'acct_1'), walletGoal(4800, 'acct_2')];

/** `ledgerloop demo --model <kind>`: `local` is the one kind there is. */
export async function runModelDemo(kind: string, opts: { readonly once: boolean }): Promise<number> {
  // The model is LEDGERLOOP_LOCAL_MODEL_ID, else the catalogue's default (packages/local-model/weights.json).
  if (kind !== 'local') {
    process.stderr.write(
      `ledgerloop demo: --model takes local (a model on this machine), not ${JSON.stringify(kind)}\n`,
    );
    return EXIT_USAGE;
  }
  return runLocalModelDemo(opts);
}

export async function runLocalModelDemo(opts: { readonly once: boolean }): Promise<number> {
  const log = (m: string): void => {
    process.stderr.write(`${m}\n`);
  };
  log('setting up the local model (the first time: node-llama-cpp and 93 MB of weights, about a minute)…');
  ensureLocalModel();
  const model = await startLocalModel({ onLog: (line) => /error|warn/i.test(line) && log(line) });
  log(
    `local model ${model.modelId} at ${model.baseUrl} (weights checked against their pinned SHA-256; ` +
      `${model.threads} thread(s), loaded in ${model.loadMs} ms; nothing downloaded at run time)`,
  );
  try {
    log('starting a headless Temporal dev server, the five simulated services and a worker process…');
    const rig = await startWalletRig(model, { name: 'demo-local-model', onProgress: log });
    try {
      const runs: ModelRun[] = [];
      for (const [i, goal] of DEMO_GOALS.entries()) {
        log(
          `run ${i + 1} of ${DEMO_GOALS.length}: the model plans (a few seconds a turn on 2 idle cores; longer when other processes keep them busy)…`,
        );
        runs.push(await runWalletGoal(rig, `run ${i + 1}`, goal));
      }
      const report = checkModelRuns(runs, walletEffects(rig));
      const rows = walletTaskRows(rig);
      const outcomes = runs.map((r) => taskOutcome(r, rows));
      process.stdout.write('\n');
      runs.forEach((run, i) =>
        process.stdout.write(
          `${[...describeRun(run, report.runs[i]!), `  task ${outcomes[i]!.done ? 'done' : 'NOT done'}: ${outcomes[i]!.why}`].join('\n')}\n\n`,
        ),
      );
      const t = totals(report);
      const rate = completionRate(outcomes);
      process.stdout.write(
        `${t.runs} runs planned by ${model.modelId}: ${t.proposals} proposals, ${t.valid} valid and ${t.rejected} rejected by the ` +
          `validation pipeline; stops ${Object.entries(t.stopReasons)
            .map(([k, n]) => `${k} ×${n}`)
            .join(
              ', ',
            )}; tasks done ${rate.done} of ${rate.of} (judged on the wallet's own database); ${t.violations === 0 ? 'the promise held on every run' : `${t.violations} VIOLATION(S)`}.\n`,
      );
      for (const v of report.violations.filter((x) => x.run === '')) process.stdout.write(`!! ${v.message}\n`);
      const code = t.violations > 0 ? 1 : 0;
      if (opts.once) return code;
      const worker = await spawnWorker({
        address: rig.stack.server.address,
        taskQueue: DEPLOYMENT_TASK_QUEUE,
        services: rig.stack.serviceUrls,
        workflowBundlePath: rig.stack.bundlePath,
        env: {
          ...rig.stack.workerEnv,
          OPENAI_BASE_URL: model.baseUrl,
          OPENAI_API_KEY: '',
          LEDGERLOOP_OPENAI_MODEL: model.modelId,
        },
      });
      try {
        const first = await prepareFirstRun(rig.stack, path.join(DATA_DIR, 'demo-local-model'));
        const env = rig.stack.server.address === DEFAULT_ADDRESS ? '' : `TEMPORAL_ADDRESS=${rig.stack.server.address} `;
        log(
          `\nThe stack stays up with the local model; a worker polls task queue ${DEPLOYMENT_TASK_QUEUE}. In another shell:`,
        );
        log(
          `  ${env}npx ledgerloop start --openai --goal "Charge 20.00 EUR (2000 minor units) to account acct_1 for order 7" --token @${first.tokensDir}/alice.jwt --wait`,
        );
        log(`  ${env}npx ledgerloop show ${runs[0]!.workflowId}`);
        log('\nCtrl-C stops the stack.');
        await new Promise<void>((resolve) => {
          process.once('SIGINT', () => resolve());
          process.once('SIGTERM', () => resolve());
        });
      } finally {
        await worker.stop();
      }
      return code;
    } finally {
      await rig.stop();
    }
  } finally {
    await model.stop();
  }
}
