/**
 * What one cached workflow holds before its first activation: the heap a run's own module instances and the SDK's
 * workflow runtime take. Creates workflows the way a worker does (`ReusableVMWorkflowCreator`, the SDK's
 * reused-V8-context creator, an internal module of the pinned @temporalio/worker 1.24), keeps them all, and
 * measures the heap between two full collections. In a process of its own, with --expose-gc:
 *
 *   node --expose-gc -r tsx/cjs lab/bench/instance-proc.ts <bundle.js> <workflow type> [count]
 *
 * Prints one JSON line: { kbPerWorkflow, msPerWorkflow, count }.
 */
import { readFileSync } from 'node:fs';
import { ReusableVMWorkflowCreator } from '@temporalio/worker/lib/workflow/reusable-vm';
import type { WorkflowCreateOptions } from '@temporalio/worker/lib/workflow/interface';

const MAP_MARK = '//# sourceMappingURL=data:';

async function main(): Promise<void> {
  const [bundlePath, workflowType, countArg] = process.argv.slice(2);
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!bundlePath || !workflowType) throw new Error('usage: instance-proc.ts <bundle.js> <workflow type> [count]');
  if (!gc) throw new Error('run with --expose-gc');
  const count = Number(countArg ?? 200);
  const code = readFileSync(bundlePath, 'utf8');
  const at = code.lastIndexOf(MAP_MARK);
  const sourceMap: unknown = JSON.parse(
    Buffer.from(code.slice(code.indexOf('base64,', at) + 'base64,'.length).trim(), 'base64').toString('utf8'),
  );
  const creator = await ReusableVMWorkflowCreator.create(
    { code, sourceMap, filename: bundlePath } as Parameters<typeof ReusableVMWorkflowCreator.create>[0],
    5_000,
    new Set<string>(),
    undefined as unknown as Parameters<typeof ReusableVMWorkflowCreator.create>[3],
  );
  const create = (i: number): Promise<unknown> =>
    creator.createWorkflow({
      info: {
        workflowType,
        workflowId: `instance-${i}`,
        runId: `run-${i}`,
        firstExecutionRunId: `run-${i}`,
        taskQueue: 'bench-instances',
        namespace: 'default',
        attempt: 1,
        historyLength: 3,
        historySize: 300,
        continueAsNewSuggested: false,
        startTime: new Date(),
        runStartTime: new Date(),
        searchAttributes: {},
        typedSearchAttributes: [],
        memo: {},
        unsafe: { isReplaying: false, now: Date.now },
      },
      randomnessSeed: [1, 2, 3, 4, 5, 6, 7, 8],
      now: Date.now(),
      showStackTraceSources: false,
      failureExceptionTypeNames: [],
    } as unknown as WorkflowCreateOptions);
  for (let i = 0; i < 5; i++) await create(1_000_000 + i); // JIT and lazy module state out of the measurement
  gc();
  gc();
  const before = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const kept: unknown[] = [];
  for (let i = 0; i < count; i++) kept.push(await create(i));
  const ms = performance.now() - t0;
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  console.log(
    JSON.stringify({
      count: kept.length,
      kbPerWorkflow: Math.round((after - before) / count / 1024),
      msPerWorkflow: Math.round((ms / count) * 100) / 100,
    }),
  );
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
