/**
 * The scripted OpenAI Agents model the refund spike runs with (worker side, behind `invokeAgentsModel`): the same
 * script as the AI SDK's (../scripted-model.ts), in the Agents SDK's item shapes. It
 * answers from the request alone, so a retried model activity answers the same.
 */
import { Usage, type Model, type ModelProvider, type ModelRequest, type ModelResponse } from '@openai/agents-core';

function userText(input: ModelRequest['input']): string {
  if (typeof input === 'string') return input;
  return input
    .map((item) => {
      if (item.type !== 'message' || item.role !== 'user') return '';
      return typeof item.content === 'string'
        ? item.content
        : item.content.map((c) => (c.type === 'input_text' ? c.text : '')).join(' ');
    })
    .join(' ');
}

function results(input: ModelRequest['input']) {
  return typeof input === 'string' ? [] : input.filter((i) => i.type === 'function_call_result');
}

function answer(output: ModelResponse['output']): ModelResponse {
  return { output, usage: new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 }) };
}

const call = (n: number, name: string, args: unknown) =>
  answer([{ type: 'function_call', callId: `call-${n}`, name, arguments: JSON.stringify(args), status: 'completed' }]);

export const scriptedAgentsModel: Model = {
  async getResponse(request) {
    const text = userText(request.input);
    const order = /order (\S+?)[:,\s]/.exec(text);
    const amount = /(\d+(?:\.\d{1,2})?) EUR/.exec(text);
    if (!order?.[1] || !amount?.[1]) throw new Error(`the scripted agents model cannot read the request: ${text}`);
    const done = results(request.input);
    if (done.length === 0) return call(1, 'get_order', { orderId: order[1] });
    const amountMinor = Math.round(Number(amount[1]) * 100);
    if (done.length === 1) return call(2, 'refund_order', { orderId: order[1], amountMinor, currency: 'EUR' });
    const last = done[done.length - 1]!;
    const said = typeof last.output === 'string' ? last.output : JSON.stringify(last.output);
    return answer([
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: `refund_order said: ${said}` }],
      },
    ]);
  },
  getStreamedResponse() {
    throw new Error('the scripted agents model does not stream');
  },
};

export const scriptedAgentsProvider: ModelProvider = { getModel: () => scriptedAgentsModel };
