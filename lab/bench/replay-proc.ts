/**
 * Replays one history in a process of its own, so it can run under `--cpu-prof` (lab/bench/sections/profile.ts):
 *
 *   node -r tsx/cjs --cpu-prof lab/bench/replay-proc.ts <history.json> <bundle.js> [--repeat N] [--stack-hook off]
 *
 * `--repeat N`: one replay worker replays the history N times in a row (Worker.runReplayHistories); the replays
 * after the first are what a running worker pays, its bundle loaded. `--stack-hook off`: the SDK's stack-trace
 * promise hook is skipped (lab/bench/stack-hook-off.cjs; a replay worker runs its workflows on this thread).
 * `--codec`: the history's payloads are encrypted; the keys come from BENCH_CODEC_KEYS (never the command line).
 *
 * Prints one JSON line: { events, ms, msEach, cpuMsEach, fromUs, toUs, stackHook } (`cpuMsEach`: this process's
 * CPU time, user + system, of each replay).
 */
import { readFileSync } from 'node:fs';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { installRuntimeLogger } from '../../src/observability/logger';
import { ledgerloopDataConverter } from '../../src/codec/data-converter';
import { workerDataConverter } from '../../src/codec/message-guard';

function option(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const [file, bundlePath] = args;
  if (!file || !bundlePath || file.startsWith('--') || bundlePath.startsWith('--')) {
    throw new Error('usage: replay-proc.ts <history.json> <bundle.js> [--repeat N] [--stack-hook off]');
  }
  const repeat = Number(option(args, '--repeat') ?? '1');
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > 20) throw new Error(`--repeat must be 1-20 (got ${repeat})`);
  const hook = option(args, '--stack-hook') ?? 'on';
  if (hook !== 'on' && hook !== 'off') throw new Error(`--stack-hook must be on or off (got ${hook})`);
  if (hook === 'off') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS preload, loaded only when asked
    (require('./stack-hook-off.cjs') as { skipStackTraceHook(): void }).skipStackTraceHook();
  }
  const codec = args.includes('--codec');
  const keys = process.env.BENCH_CODEC_KEYS;
  if (codec && !keys) throw new Error('--codec needs the keys in BENCH_CODEC_KEYS');
  installRuntimeLogger({ component: 'bench-replay', level: 'ERROR', format: 'text' });
  const history = historyFromJSON(JSON.parse(readFileSync(file, 'utf8')));
  const mono = (): number => Number(process.hrtime.bigint() / 1000n);
  const fromUs = mono();
  const t0 = performance.now();
  const msEach: number[] = [];
  const cpuMsEach: number[] = [];
  const histories = Array.from({ length: repeat }, (_, i) => ({ workflowId: `replayed-${i}`, history }));
  let last = t0;
  let lastCpu = process.cpuUsage();
  for await (const r of Worker.runReplayHistories(
    {
      workflowBundle: { codePath: bundlePath },
      replayName: 'bench',
      ...(codec && keys ? { dataConverter: workerDataConverter(ledgerloopDataConverter(keys)) } : {}),
    },
    histories,
  )) {
    if (r.error) throw r.error;
    const now = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    msEach.push(now - last);
    cpuMsEach.push((cpu.user + cpu.system) / 1000);
    last = now;
    lastCpu = process.cpuUsage();
  }
  const ms = performance.now() - t0;
  // The window of the replay on the --cpu-prof clock: module loading before it is left out of the analysis.
  console.log(
    JSON.stringify({
      events: history.events?.length ?? 0,
      ms,
      msEach,
      cpuMsEach,
      fromUs,
      toUs: mono(),
      stackHook: hook,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
