/**
 * What of `ai` 7 runs inside the workflow sandbox, under `AiSdkPlugin`'s polyfills: each probe runs one feature
 * and reports `ok: ...` or the error it met (`Name: message`). The worker's models are test/support's probe
 * provider: `json-model` answers `{"answer":42}`, `refund-model` is the refund agent's script. Read by
 * test/integration/ai-sdk-sandbox.test.ts, which states each finding (docs/design-ai-sdk.md lists them).
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateId, generateText, Output, stepCountIs, streamText, tool } from 'ai';
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { z } from 'zod';

const json = () => temporalProvider.languageModel('json-model');

const tools = {
  get_order: tool({
    description: 'Look an order up.',
    inputSchema: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => ({ orderId, amountMinor: 100 }),
  }),
};

async function probe(run: () => Promise<string>): Promise<string> {
  try {
    return `ok: ${await run()}`;
  } catch (err) {
    const e = err as Error;
    return `${e?.name ?? 'Error'}: ${e?.message ?? String(err)}`.slice(0, 300);
  }
}

const GLOBALS = [
  'fetch',
  'AbortController',
  'AbortSignal',
  'TextEncoder',
  'TextDecoder',
  'crypto',
  'structuredClone',
  'TransformStream',
  'ReadableStream',
  'Headers',
  'EventTarget',
  'URL',
  'WebSocket',
] as const;

/** A refund turn whose get_order call needs approval: the content types it ends with. */
async function approvalRun(extra: { experimental_toolApprovalSecret?: string }): Promise<string> {
  const r = await generateText({
    model: temporalProvider.languageModel('refund-model'),
    prompt: 'refund order ord-1: 10.00 EUR',
    tools,
    stopWhen: stepCountIs(3),
    toolApproval: { get_order: 'user-approval' },
    ...extra,
  });
  return r.content.map((c) => c.type).join(',');
}

export async function aiSdkProbe(): Promise<Record<string, string>> {
  const g = globalThis as Record<string, unknown>;
  return {
    globals: GLOBALS.map((name) => `${name}:${typeof g[name]}`).join(' '),
    generateId: await probe(async () => String(generateId().length)),
    outputObject: await probe(async () => {
      const r = await generateText({
        model: json(),
        prompt: 'the answer',
        output: Output.object({ schema: z.object({ answer: z.number() }) }),
      });
      return JSON.stringify(r.output);
    }),
    timeoutOption: await probe(async () => (await generateText({ model: json(), prompt: 'x', timeout: 5_000 })).text),
    // onError: the stream's error is reported by the text's rejection, not logged.
    streamText: await probe(
      async () => await streamText({ model: json(), prompt: 'x', onError: () => undefined }).text,
    ),
    toolApproval: await probe(() => approvalRun({})),
    signedToolApproval: await probe(() => approvalRun({ experimental_toolApprovalSecret: 'not-a-secret' })),
    providerInWorkflow: await probe(async () => {
      const local = createOpenAICompatible({ name: 'local', baseURL: 'http://127.0.0.1:9/v1' });
      return (await generateText({ model: local.languageModel('m'), prompt: 'x', maxRetries: 0 })).text;
    }),
  };
}
