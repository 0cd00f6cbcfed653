/**
 * `npm run upgrade-demo`: the rolling upgrade of lab/versioning/rolling-upgrade.ts on a dev server of its own
 * (or the server TEMPORAL_ADDRESS names, e.g. the cluster's). Prints what each run did; exits 1 on a violation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installRuntimeLogger } from '../../src/observability/logger';
import { startStack } from '../stack';
import { runRollingUpgrade } from './rolling-upgrade';

async function main(): Promise<number> {
  installRuntimeLogger({ component: 'upgrade', level: 'WARN', format: 'text' });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-upgrade-'));
  const say = (line: string) => process.stderr.write(`upgrade: ${line}\n`);
  const stack = await startStack({ name: 'upgrade', server: { headless: true } });
  try {
    const report = await runRollingUpgrade(stack, { dir, say });
    for (const r of report.runs)
      process.stdout.write(
        `run ${r.run}  started on ${r.startedOn}, finished on ${r.finishedOn} (${r.behavior}): ${r.stopReason}, ${r.effects} effect(s)\n`,
      );
    process.stdout.write(
      `run A's history ${report.aReplaysOnNext ? 'replays' : 'does not replay'} on the new version: ` +
        `${report.aReplaysOnNext ? 'the change was compatible' : 'pinning is what kept it whole'}\n`,
    );
    for (const v of report.violations) process.stdout.write(`VIOLATION: ${v}\n`);
    return report.violations.length === 0 ? 0 : 1;
  } finally {
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
