/** The probe workflow's models (test/support/ai-sdk-probe.workflows.ts), for the worker's `AiSdkPlugin`. */
import type { ProviderV4 } from '@ai-sdk/provider';
import { MockLanguageModelV4, MockProviderV4 } from 'ai/test';
import { scriptedRefundTurn } from '../../examples/refund-ai-sdk/src/scripted-model';

export function probeModels(): ProviderV4 {
  const json = new MockLanguageModelV4({
    doGenerate: async () => ({
      content: [{ type: 'text', text: '{"answer":42}' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 },
      },
      warnings: [],
    }),
  });
  const refund = new MockLanguageModelV4({ doGenerate: async (options) => scriptedRefundTurn(options) });
  return new MockProviderV4({ languageModels: { 'json-model': json, 'refund-model': refund } });
}
