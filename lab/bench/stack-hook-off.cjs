/**
 * A measurement, not a configuration: preloaded (`-r`) into a benchmark worker for the ablation cells "... the
 * SDK's stack-trace hook off" (lab/bench/sections/profile.ts). TS SDK 1.24 installs a V8 promise hook in every
 * workflow thread that captures and source-maps a stack trace for each promise workflow code makes (it serves the
 * `__stack_trace` query) and has no option to leave it out. This preload runs in each workflow thread (worker
 * threads inherit the process's `-r` flags) and makes the SDK's install step skip that hook, so a cell can price
 * it. Each thread where the hook was skipped appends its thread id to the file BENCH_STACK_HOOK_OFF_MARK names:
 * the bench refuses a cell whose file stays empty (the experiment did not take).
 *
 * Never load this in a production worker: without the hook the `__stack_trace` query fails.
 */
'use strict';
const { isMainThread, threadId } = require('node:worker_threads');

/**
 * Makes the SDK's install step in this thread skip the promise hook. Must run before the thread's first workflow
 * (the SDK installs its handlers once per thread). A replay worker runs its workflows on the main thread, so the
 * bench's replay process calls this itself (lab/bench/replay-proc.ts).
 */
function skipStackTraceHook() {
  const { globalHandlers } = require('@temporalio/worker/lib/workflow/vm-shared');
  if (globalHandlers.installed) throw new Error('the SDK installed its stack-trace hook in this thread already');
  globalHandlers.setPromiseHook = function skipPromiseHook() {
    const mark = process.env.BENCH_STACK_HOOK_OFF_MARK;
    if (mark) require('node:fs').appendFileSync(mark, `${threadId}\n`);
  };
}

if (!isMainThread) skipStackTraceHook();

module.exports = { skipStackTraceHook };
