/**
 * The scripted AI SDK model the refund agent runs with in tests (and without an API key): a `MockLanguageModelV4`
 * from `ai/test`, served by a `MockProviderV4` that the worker's `AiSdkPlugin` is given, so the model call is an
 * activity like any provider's. It answers from the prompt alone, so a retried model activity answers the same:
 *
 *   no tool result yet        -> get_order { orderId }
 *   the order came back       -> refund_order { orderId, amountMinor, currency }
 *   the refund came back      -> a text naming the refund's outcome (the tool result, as the model read it)
 *
 * The order and amount come from the user's message ("refund order ord-1: 40.00 EUR ..."); a message it cannot
 * read fails the call loudly rather than guessing.
 */
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult, ProviderV4 } from '@ai-sdk/provider';
import { MockLanguageModelV4, MockProviderV4 } from 'ai/test';

/** The model id the agents ask `temporalProvider` for. */
export const REFUND_MODEL_ID = 'refund-model';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function toolCall(step: number, toolName: string, input: unknown): LanguageModelV4GenerateResult {
  return {
    content: [{ type: 'tool-call', toolCallId: `call-${step}`, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

/** The user's request as the script reads it. */
export function readRequest(prompt: LanguageModelV4CallOptions['prompt']): { orderId: string; amountMinor: number } {
  const text = prompt
    .filter((m) => m.role === 'user')
    .flatMap((m) => m.content)
    .map((p) => (p.type === 'text' ? p.text : ''))
    .join(' ');
  const order = /order (\S+?)[:,\s]/.exec(text);
  const amount = /(\d+(?:\.\d{1,2})?) EUR/.exec(text);
  if (!order?.[1] || !amount?.[1]) throw new Error(`the scripted refund model cannot read the request: ${text}`);
  return { orderId: order[1], amountMinor: Math.round(Number(amount[1]) * 100) };
}

/** The tool results in the prompt so far, oldest first. */
function toolResults(prompt: LanguageModelV4CallOptions['prompt']) {
  return prompt.flatMap((m) => (m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : []));
}

export function scriptedRefundTurn(options: LanguageModelV4CallOptions): LanguageModelV4GenerateResult {
  const request = readRequest(options.prompt);
  const results = toolResults(options.prompt);
  if (results.length === 0) return toolCall(1, 'get_order', { orderId: request.orderId });
  if (results.length === 1) return toolCall(2, 'refund_order', { ...request, currency: 'EUR' });
  const last = results[results.length - 1]!.output;
  const said = last.type === 'json' || last.type === 'error-json' ? JSON.stringify(last.value) : String(last.type);
  return {
    content: [{ type: 'text', text: `refund_order said: ${said}` }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage,
    warnings: [],
  };
}

/** The provider a worker's `AiSdkPlugin({ modelProvider })` is given. */
export function scriptedRefundProvider(): ProviderV4 {
  const model = new MockLanguageModelV4({
    modelId: REFUND_MODEL_ID,
    doGenerate: async (options) => scriptedRefundTurn(options),
  });
  return new MockProviderV4({ languageModels: { [REFUND_MODEL_ID]: model } });
}
