/**
 * A measurement, not a configuration: preloaded (`-r`, after tsx) into a benchmark worker process for the
 * attribution section's cells (lab/bench/sections/attribution.ts). BENCH_WORKER_SWITCHES names runtime modules
 * (absolute paths, as Node resolves them) and the bench stubs that stand in for them in this process: every
 * `require` that resolves to such a module gets the stub instead, except the stub's own require of it (a stub
 * re-exports what it does not change). Each module replaced is appended, once, to the file
 * BENCH_WORKER_SWITCH_MARK names: the bench refuses a cell whose switch never took.
 *
 * Never load this in a production worker: it exists to take a guarantee out.
 */
'use strict';
const fs = require('node:fs');
const Module = require('node:module');

const table = JSON.parse(process.env.BENCH_WORKER_SWITCHES || '{}');
const markFile = process.env.BENCH_WORKER_SWITCH_MARK;
const marked = new Set();
const resolve = Module._resolveFilename;

Module._resolveFilename = function resolveSwitched(request, parent, ...rest) {
  const resolved = resolve.call(this, request, parent, ...rest);
  const stub = table[resolved];
  if (stub === undefined || (parent && parent.filename === stub)) return resolved;
  if (markFile && !marked.has(resolved)) {
    marked.add(resolved);
    fs.appendFileSync(markFile, `${resolved}\n`);
  }
  return stub;
};
