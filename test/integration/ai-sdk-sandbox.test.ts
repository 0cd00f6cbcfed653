/**
 * What of `ai` 7 runs in the Temporal workflow sandbox (SDK 1.24, `@temporalio/ai-sdk` 1.23.0), each finding a
 * test so a change in either package shows here (docs/design-ai-sdk.md, "What runs in the sandbox"):
 * - with `AiSdkPlugin`'s polyfills: `generateText` with tools, `stopWhen` (the refund baseline's test), structured
 *   output, `generateId` and `toolApproval` run; the `timeout` option, signed tool approvals, `streamText` without
 *   a streaming topic and any provider called from workflow code do not, each with the error named below;
 * - without them (a bundle built without the plugin), importing `ai` fails the workflow task:
 *   `TransformStream is not defined`, thrown by eventsource-parser's `class ... extends TransformStream` at module
 *   scope.
 */
import { Client, Connection } from '@temporalio/client';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { bundleWorkflowCode, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { probeModels } from '../support/ai-sdk-probe-models';
import { firstWorkflowTaskFailure } from '../support/workflow-task-failure';
import { quietRuntime, taskQueue } from '../helpers/stack';

const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';
const PROBE = require.resolve('../support/ai-sdk-probe.workflows');

let nativeConnection: NativeConnection;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  quietRuntime();
  nativeConnection = await NativeConnection.connect({ address });
  connection = await Connection.connect({ address });
  client = new Client({ connection });
});

afterAll(async () => {
  await connection?.close();
  await nativeConnection?.close();
});

test('under AiSdkPlugin, ai 7 runs generateId, structured output and tool approval; what needs fetch, crypto or AbortSignal does not', async () => {
  const tq = taskQueue('ai-sdk-probe');
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue: tq,
    workflowsPath: PROBE,
    plugins: [new AiSdkPlugin({ modelProvider: probeModels() })],
  });
  const found = await worker.runUntil(
    client.workflow.execute('aiSdkProbe', { taskQueue: tq, workflowId: tq, workflowExecutionTimeout: '60s' }),
  );
  expect(found).toEqual({
    // The plugin brings web streams, Headers and structuredClone; the sandbox has no fetch, crypto or AbortSignal.
    globals:
      'fetch:undefined AbortController:function AbortSignal:undefined TextEncoder:function TextDecoder:function ' +
      'crypto:undefined structuredClone:function TransformStream:function ReadableStream:function ' +
      'Headers:function EventTarget:undefined URL:function WebSocket:undefined',
    generateId: 'ok: 16',
    outputObject: 'ok: {"answer":42}',
    // generateText({ timeout }) builds AbortSignal.timeout(): use the activity's timeouts instead.
    timeoutOption: 'ReferenceError: AbortSignal is not defined',
    // TemporalLanguageModel.doStream refuses without languageModel.streamingTopic; streamText reports no output.
    streamText: 'AI_NoOutputGeneratedError: No output generated. Check the stream for errors.',
    // The loop stops at the call that needs approval and hands the request back: the caller must resume it.
    toolApproval: 'ok: tool-call,tool-approval-request',
    // Signing approvals (experimental_toolApprovalSecret) needs WebCrypto.
    signedToolApproval: 'ReferenceError: crypto is not defined',
    // A provider used directly in workflow code (not through temporalProvider) has no fetch.
    providerInWorkflow: 'TypeError: fetch is not a function',
  });
}, 120_000);

test('without the plugin’s polyfills, importing ai fails the workflow task: TransformStream is not defined', async () => {
  const tq = taskQueue('ai-sdk-no-polyfills');
  // Bundled without AiSdkPlugin (its configureBundler prepends the polyfills); the plugin still gives the activities.
  const { code } = await bundleWorkflowCode({ workflowsPath: PROBE, logger: Runtime.instance().logger });
  const worker = await Worker.create({
    connection: nativeConnection,
    taskQueue: tq,
    workflowBundle: { code },
    plugins: [new AiSdkPlugin({ modelProvider: probeModels() })],
  });
  const failure = await worker.runUntil(async () =>
    firstWorkflowTaskFailure(await client.workflow.start('aiSdkProbe', { taskQueue: tq, workflowId: tq })),
  );
  expect(failure.message).toBe('TransformStream is not defined');
  // At module scope: @ai-sdk/provider-utils (under ai and every provider) evaluates eventsource-parser's stream class.
  expect(failure.stack).toMatch(/eventsource-parser\/src\/stream\.ts/);
}, 120_000);
