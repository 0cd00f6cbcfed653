/**
 * The bench's hook-off preload (lab/bench/stack-hook-off.cjs) prices the SDK's stack-trace promise hook by making
 * the workflow threads skip it. These cases run the SDK's own install step in a worker thread, with and without
 * the preload, so a change in how @temporalio/worker installs the hook shows here rather than as a bench cell
 * that silently measures the hook on.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ablationCells } from '../../lab/bench/sections/profile';

const REPO = path.resolve(__dirname, '..', '..');
const PRELOAD = path.join(REPO, 'lab', 'bench', 'stack-hook-off.cjs');

// In a worker thread (as the SDK's workflow threads are): install the SDK's global handlers, report whether the
// promise hook went in, and whether it fires (a promise made after the install).
const THREAD_PROBE = `
const { Worker } = require('node:worker_threads');
const code = \`
  const { parentPort } = require('node:worker_threads');
  const { globalHandlers } = require(${JSON.stringify(path.join(REPO, 'node_modules/@temporalio/worker/lib/workflow/vm-shared'))});
  globalHandlers.install();
  parentPort.postMessage({ installed: globalHandlers.promiseHookInstalled });
\`;
new Worker(code, { eval: true }).on('message', (m) => console.log(JSON.stringify(m)));
`;

function probe(preload: boolean, mark: string): { installed: boolean } {
  const out = execFileSync(process.execPath, [...(preload ? ['-r', PRELOAD] : []), '-e', THREAD_PROBE], {
    cwd: REPO,
    env: { ...process.env, BENCH_STACK_HOOK_OFF_MARK: mark },
    encoding: 'utf8',
  });
  return JSON.parse(out.trim()) as { installed: boolean };
}

describe("the bench's stack-trace hook-off preload", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hook-off-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("installs the SDK's promise hook in a worker thread without the preload (the control)", () => {
    const mark = path.join(dir, 'control');
    expect(probe(false, mark)).toEqual({ installed: true });
    expect(() => readFileSync(mark, 'utf8')).toThrow(/ENOENT/);
  });

  it('skips it with the preload, and marks the thread that skipped it', () => {
    const mark = path.join(dir, 'off');
    expect(probe(true, mark)).toEqual({ installed: false });
    expect(readFileSync(mark, 'utf8').trim()).toMatch(/^\d+$/);
  });
});

describe('the ablation cells a bench run makes', () => {
  const cells = (spec: string | undefined): string[] =>
    ablationCells(spec).map((c) => `${c.kind}${c.hookOff ? ' (hook off)' : ''}${c.reference ? ' [reference]' : ''}`);

  it('runs the bare loop, the governed opening, the governed bytes and the governed loop by default', () => {
    expect(cells(undefined)).toEqual(['bare [reference]', 'bare', 'bare', 'governed']);
  });

  it('runs the named cells, always with the bare one, and both hook-off cells with their own reference', () => {
    expect(cells('governed,hook-off')).toEqual([
      'bare [reference]',
      'governed',
      'bare (hook off) [reference]',
      'governed (hook off)',
    ]);
  });

  it('refuses an unknown cell, naming the known ones', () => {
    expect(() => cells('governed,nope')).toThrow(/BENCH_ABLATIONS: unknown cell\(s\) nope \(known: bare, activity/);
  });
});
