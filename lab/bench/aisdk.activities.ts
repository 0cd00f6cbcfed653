/**
 * The AI SDK peer's worker side (lab/bench/workflows/aisdk.workflow.ts): what a team on `@temporalio/ai-sdk` writes
 * beside its workflow. The model is `AiSdkPlugin`'s model activity (`invokeModel`) over a scripted AI SDK model
 * (`MockLanguageModelV4` from `ai/test`) that serves the same `n-debits` turns as the governed planner, `barePlan`
 * and `peerModel`, reading where the conversation stands from the prompt it is sent (one tool result per turn so
 * far). The tool is one plain activity, `aiSdkDebit`: the same signed debit as `bareDebit`, keyed by the workflow
 * and activity ids (as `peerTool`). Nothing else.
 */
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult, ProviderV4 } from '@ai-sdk/provider';
import { ApplicationFailure } from '@temporalio/activity';
import { MockLanguageModelV4, MockProviderV4 } from 'ai/test';
import { scenarios } from '../scenarios';
import { createBareActivities, type BareDeps } from './bare.activities';
import { debitKeyedByActivity, type PeerDebitArgs } from './peer.activities';

import { AISDK_MODEL_ID } from './lib/aisdk-model';

export { AISDK_MODEL_ID };

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** The request as the peer's workflow writes it: `bench: <turns> debit(s) from account <account>`. */
const REQUEST = /^bench: (\d+) debit\(s\) from account (\S+)$/;

/** One scripted turn, from the prompt alone, so a retried model activity answers the same. */
export function scriptedAiSdkTurn(options: LanguageModelV4CallOptions): LanguageModelV4GenerateResult {
  const text = options.prompt
    .filter((m) => m.role === 'user')
    .flatMap((m) => m.content)
    .map((p) => (p.type === 'text' ? p.text : ''))
    .join(' ');
  const asked = REQUEST.exec(text);
  if (!asked) throw new Error(`the scripted AI SDK model cannot read the request: ${text.slice(0, 200)}`);
  const script = scenarios['n-debits']!({ turns: Number(asked[1]), account: asked[2] });
  const results = options.prompt.flatMap((m) =>
    m.role === 'tool' ? m.content.filter((p) => p.type === 'tool-result') : [],
  );
  const turn = script[results.length];
  if (turn === undefined || !('proposals' in turn)) {
    return {
      content: [{ type: 'text', text: `Done: ${results.length} tool result(s).` }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    };
  }
  return {
    content: turn.proposals.map((p, i) => ({
      type: 'tool-call' as const,
      toolCallId: `call_${results.length + 1}_${i}`,
      toolName: p.name,
      input: JSON.stringify(p.arguments),
    })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

/** The provider the peer's `AiSdkPlugin({ modelProvider })` is given. */
export function scriptedAiSdkProvider(): ProviderV4 {
  const model = new MockLanguageModelV4({ modelId: AISDK_MODEL_ID, doGenerate: async (o) => scriptedAiSdkTurn(o) });
  return new MockProviderV4({ languageModels: { [AISDK_MODEL_ID]: model } });
}

export interface AiSdkDebitRequest {
  readonly args: PeerDebitArgs;
  readonly context: { readonly tenant: string; readonly principalId: string };
}

export function createAiSdkActivities(deps: BareDeps) {
  const { bareDebit } = createBareActivities(deps);
  /** The `wallet_debit` tool's effect, as the AI SDK hands the tool its parsed arguments. */
  async function aiSdkDebit(req: AiSdkDebitRequest): Promise<{ ok: boolean; receipt: string | null }> {
    if (typeof req.args?.account !== 'string')
      throw ApplicationFailure.nonRetryable('wallet_debit needs an account', 'Peer.BadArguments');
    const result = await debitKeyedByActivity(bareDebit, req.args, req.context);
    return { ok: result.ok, receipt: result.receipt ?? null };
  }
  return { aiSdkDebit };
}

export type AiSdkActivities = ReturnType<typeof createAiSdkActivities>;
