/**
 * A rolling upgrade under a running agent, on the real dev server (lab/versioning/rolling-upgrade.ts): a run that
 * waits for an approval across the upgrade finishes on the version it started on, a new run starts on the new
 * one, each charges once, and the waiting run's history would not have replayed on the new version.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runRollingUpgrade } from '../../lab/versioning/rolling-upgrade';
import { startTestStack } from '../helpers/stack';
import type { Stack } from '../../lab/stack';

jest.setTimeout(240_000);

let stack: Stack;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'll-upgrade-'));
  stack = await startTestStack('upgrade');
});
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the waiting run finishes on 1.0.0, the new run starts on 1.0.1, each charges once', async () => {
  const report = await runRollingUpgrade(stack, { dir });
  expect(report.violations).toEqual([]);
  expect(report.runs.map((r) => [r.run, r.startedOn, r.finishedOn, r.behavior, r.stopReason, r.effects])).toEqual([
    ['A', '1.0.0', '1.0.0', 'PINNED', 'completed', 1],
    ['B', '1.0.1', '1.0.1', 'PINNED', 'completed', 1],
  ]);
  // The positive control of the pinning: the waiting run's history breaks on the new code.
  expect(report.aReplaysOnNext).toBe(false);
});
