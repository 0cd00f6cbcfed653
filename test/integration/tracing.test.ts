/**
 * Tracing on a real dev server: one agent run with the OpenTelemetry interceptors, spans kept in memory. The
 * client's StartWorkflow span, the workflow's RunWorkflow span (exported from the sandbox through the sink) and
 * the activities' RunActivity spans belong to one trace.
 */
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Stack } from '../../lab/stack';
import { createTracing, type Tracing } from '../../src/observability/tracing';
import { input, runAgent, type RunOutcome } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);

const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let stack: Stack;
let outcome: RunOutcome;
let spans: ReadableSpan[];

beforeAll(async () => {
  tracing = createTracing({ exporter, serviceName: 'ledgerloop-test', simple: true });
  stack = await startTestStack('tracing', { tracing });
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 10_000, currency: 'EUR' });
  outcome = await runAgent(stack, 'tracing', input());
  await tracing.forceFlush();
  spans = exporter.getFinishedSpans();
});
afterAll(async () => {
  await stack?.stop();
  await tracing?.shutdown();
});

function named(name: string): ReadableSpan[] {
  return spans.filter((s) => s.name === name);
}

test('the traced run completes', () => {
  expect(outcome.result.stopReason).toBe('completed');
});

test('client, workflow and activity spans of the run share one trace', () => {
  const [start] = named('StartWorkflow:agentRun');
  expect(start).toBeDefined();
  const traceId = start!.spanContext().traceId;
  const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);
  const names = new Set(inTrace.map((s) => s.name));
  expect(names).toContain('RunWorkflow:agentRun');
  expect(names).toContain('RunActivity:planTurn');
  expect(names).toContain('RunActivity:dispatchTool');
  expect(names).toContain('StartActivity:dispatchTool');

  const run = inTrace.find((s) => s.name === 'RunWorkflow:agentRun')!;
  expect(run.parentSpanId).toBe(start!.spanContext().spanId);
  expect(run.attributes.workflowId).toBe(outcome.workflowId);
  // Activity execution hangs under the workflow's StartActivity span.
  const startActivityIds = new Set(
    inTrace.filter((s) => s.name === 'StartActivity:dispatchTool').map((s) => s.spanContext().spanId),
  );
  const dispatch = inTrace.find((s) => s.name === 'RunActivity:dispatchTool')!;
  expect(startActivityIds.has(dispatch.parentSpanId!)).toBe(true);
  expect(dispatch.resource.attributes['service.name']).toBe('ledgerloop-test');
});
