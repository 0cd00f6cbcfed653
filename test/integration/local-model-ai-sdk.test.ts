/**
 * The local model server as an AI SDK provider: `generateText` with tools, through `@ai-sdk/openai-compatible`,
 * with no API key, against the REAL model (the default one, or LEDGERLOOP_LOCAL_MODEL_ID). Opt-in like the other
 * local-model tests: it runs when the model is installed (scripts/setup-local-model.sh), and must with
 * LEDGERLOOP_LOCAL_MODEL=required (CI). It asserts the round trip, never that the model is smart: the first step
 * is a tool call (tool choice `required`) whose input the SDK parsed against the tool's schema, the tool runs, its
 * result goes back as a tool message paired by id (the server refuses unpaired ones with a 400), and the next step
 * answers in text.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, isStepCount, tool } from 'ai';
import { z } from 'zod';
import {
  localModelInstalled,
  serverStats,
  startLocalModel,
  type LocalModelProcess,
} from '../../lab/local-model/server-process';

const required = process.env.LEDGERLOOP_LOCAL_MODEL === 'required';
const installed = localModelInstalled();

jest.setTimeout(600_000);

if (!installed && !required) {
  test.skip('an AI SDK agent on the local model (skipped: run scripts/setup-local-model.sh to install it)', () =>
    undefined);
} else {
  let server: LocalModelProcess;
  beforeAll(async () => {
    if (!installed) throw new Error('LEDGERLOOP_LOCAL_MODEL=required but the local model is not installed');
    server = await startLocalModel();
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('generateText with a tool: the call is parsed, executed, answered by id, and the model replies', async () => {
    const local = createOpenAICompatible({ name: 'ledgerloop-local', baseURL: server.baseUrl });
    const executed: Array<{ orderId: string }> = [];
    const lookupOrder = tool({
      description: 'Look up the status of an order by its id.',
      inputSchema: z.object({ orderId: z.string().regex(/^ord_[0-9]{4}$/) }),
      execute: async ({ orderId }) => {
        executed.push({ orderId });
        return { orderId, status: 'shipped', carrier: 'PostNL' };
      },
    });
    const result = await generateText({
      model: local(server.modelId),
      system: 'You answer questions about orders. Use the tools to look orders up.',
      prompt: 'What is the status of order ord_1234? Answer in one short sentence.',
      tools: { lookup_order: lookupOrder },
      // The first step must call the tool; the second must answer with text.
      prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? 'required' : 'none' }),
      stopWhen: isStepCount(2),
      // Unknown provider options go into the request body: one call per reply.
      providerOptions: { ledgerloopLocal: { parallel_tool_calls: false } },
      temperature: 0,
      maxOutputTokens: 96,
      maxRetries: 0,
    });

    expect(result.steps).toHaveLength(2);
    const [first, second] = result.steps;
    expect(first!.finishReason).toBe('tool-calls');
    expect(first!.toolCalls).toHaveLength(1);
    const call = first!.toolCalls[0]!;
    expect(call.toolName).toBe('lookup_order');
    // The grammar held the input to the schema (pattern included): the SDK parsed it and ran the tool with it.
    expect(call.input).toEqual({ orderId: expect.stringMatching(/^ord_[0-9]{4}$/) });
    expect(executed).toEqual([call.input]);
    expect(first!.toolResults).toEqual([
      expect.objectContaining({
        toolCallId: call.toolCallId,
        output: { ...executed[0], status: 'shipped', carrier: 'PostNL' },
      }),
    ]);
    // Text, whole or cut at the token limit (a small model may talk on): not a call.
    expect(['stop', 'length']).toContain(second!.finishReason);
    expect(second!.toolCalls).toHaveLength(0);
    expect(result.text.trim().length).toBeGreaterThan(0);
    expect(result.usage.inputTokens).toBeGreaterThan(0);

    // The server saw two requests: the call, then the answer to a conversation carrying the tool result.
    const stats = (await serverStats(server)).slice(-2);
    expect(stats.map((s) => [s.status, s.finishReason === 'length' ? 'stop' : s.finishReason, s.toolCalls])).toEqual([
      [200, 'tool_calls', 1],
      [200, 'stop', 0],
    ]);
  });
}
