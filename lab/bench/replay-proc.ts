/**
 * Replays one history file in a process of its own, so it can run under `--cpu-prof` (lab/bench/sections/profile.ts):
 *
 *   node -r tsx/cjs --cpu-prof lab/bench/replay-proc.ts <history.json> <bundle.js>
 *
 * Prints one JSON line: { events, ms, fromUs, toUs }.
 */
import { readFileSync } from 'node:fs';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { installRuntimeLogger } from '../../src/observability/logger';

async function main(): Promise<void> {
  const [file, bundlePath] = process.argv.slice(2);
  if (!file || !bundlePath) throw new Error('usage: replay-proc.ts <history.json> <bundle.js>');
  installRuntimeLogger({ component: 'bench-replay', level: 'ERROR', format: 'text' });
  const history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
  const mono = (): number => Number(process.hrtime.bigint() / 1000n);
  const fromUs = mono();
  const t0 = performance.now();
  await Worker.runReplayHistory({ workflowBundle: { codePath: bundlePath }, replayName: 'profiled' }, history);
  const ms = performance.now() - t0;
  // The window of the replay on the --cpu-prof clock: module loading before it is left out of the analysis.
  console.log(JSON.stringify({ events: history.events?.length ?? 0, ms, fromUs, toUs: mono() }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
