/**
 * The AI SDK peer: the same agent on `@temporalio/ai-sdk` with plain activities, what a team would run instead of
 * Ledgerloop. The team's own `generateText` loop with one tool and `stopWhen`; the model call is the plugin's
 * activity (`temporalProvider`), the tool's effect one plain activity (`aiSdkDebit`, the same signed debit as
 * bareLoop's, keyed by the workflow and activity ids). The tool's input schema is the team's zod schema, which the
 * AI SDK checks before it runs the tool. No ledger, operation key, authorization or search attributes; a tool that
 * failed for good is reported to the model and the loop goes on (as the samples do).
 *
 * The governed version of the same agent (the AI SDK with Ledgerloop's governed tools) is the kind `aisdk-governed`
 * when those tools land: its own workflow module here, its own bundle, and a row beside this one
 * (lab/bench/lib/runs.ts, PEER_KINDS).
 */
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import type { AiSdkActivities } from '../aisdk.activities';

export interface AiSdkLoopInput {
  readonly tenant: string;
  readonly principalId: string;
  /** The agent's instructions and the user's request (`bench: <turns> debit(s) from account <account>`). */
  readonly instructions: string;
  readonly prompt: string;
  readonly modelId: string;
  /** At most this many model calls (the turns asked for, then the final answer). */
  readonly maxSteps: number;
}

export interface AiSdkLoopResult {
  readonly output: string;
  readonly steps: number;
  readonly calls: readonly { readonly toolCallId: string; readonly ok: boolean }[];
}

// The same retry shape and timeouts as bareLoop's tool call: 3 attempts, 200 ms doubling.
const { aiSdkDebit } = proxyActivities<AiSdkActivities>({
  startToCloseTimeout: '10s',
  retry: {
    maximumAttempts: 3,
    initialInterval: 200,
    backoffCoefficient: 2,
    maximumInterval: 2_000,
    nonRetryableErrorTypes: ['Bare.Rejected'],
  },
});

const DebitArgs = z.object({
  account: z.string(),
  amount: z.object({ minor: z.number().int().positive(), currency: z.string().length(3) }),
  memo: z.string().max(200).optional(),
});

export async function aiSdkLoop(input: AiSdkLoopInput): Promise<AiSdkLoopResult> {
  const calls: { toolCallId: string; ok: boolean }[] = [];
  const context = { tenant: input.tenant, principalId: input.principalId };
  const { text, steps } = await generateText({
    model: temporalProvider.languageModel(input.modelId),
    system: input.instructions,
    prompt: input.prompt,
    stopWhen: stepCountIs(input.maxSteps),
    tools: {
      wallet_debit: tool({
        description: 'Debit an amount from a customer account in the caller tenant.',
        inputSchema: DebitArgs,
        execute: async (args, { toolCallId }) => {
          try {
            const done = await aiSdkDebit({ args, context });
            calls.push({ toolCallId, ok: done.ok });
            return done;
          } catch (err) {
            const cause = err instanceof ActivityFailure ? err.cause : err;
            calls.push({ toolCallId, ok: false });
            return {
              error: cause instanceof ApplicationFailure || cause instanceof Error ? cause.message : String(cause),
            };
          }
        },
      }),
    },
  });
  return { output: text, steps: steps.length, calls };
}
