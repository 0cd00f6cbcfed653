/**
 * The governed AI SDK agent: the AI SDK peer's agent (aisdk.workflow.ts) with its debit tool through Ledgerloop's
 * governed tools, what a team on `@temporalio/ai-sdk` runs when it adds Ledgerloop. The same `generateText` loop,
 * the same model activity (`temporalProvider`, the plugin's `invokeModel` over the same scripted model), the same
 * `stopWhen`. What changed is the tool: `wallet_debit` is the built-in declaration handed to `governedTools`, so
 * each call is validated, keyed by its canonical arguments' hash, authorized at dispatch against the verified
 * principal and the held policy, and dispatched by `dispatchTool`; the session opens (identity verified) and ends
 * (the saga, a typed stop) around the loop. The same strategy and budgets as the governed row's agentRun.
 */
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { generateText, stepCountIs } from 'ai';
import { governedSession, governedTools, type SessionResult } from '../../../workflows/ai-sdk';
import type { AiSdkLoopInput } from './aisdk.workflow';

export interface AiSdkGovernedLoopInput extends Omit<AiSdkLoopInput, 'tenant' | 'principalId'> {
  readonly principal: { readonly id: string; readonly tenant: string };
  /** The principal's start token (the session verifies it when it opens). */
  readonly identityToken: string | undefined;
  readonly deadlineAt: string;
}

export async function aiSdkGovernedLoop(input: AiSdkGovernedLoopInput): Promise<SessionResult<string>> {
  const session = await governedSession({
    principal: input.principal,
    identityToken: input.identityToken,
    deadlineAt: input.deadlineAt,
    strategy: 'same_key_replay',
    budgets: { maxTurns: input.maxSteps, maxToolCalls: input.maxSteps },
    goal: input.prompt,
  });
  try {
    const { text } = await generateText({
      model: temporalProvider.languageModel(input.modelId),
      system: input.instructions,
      prompt: input.prompt,
      stopWhen: stepCountIs(input.maxSteps),
      tools: governedTools(session, ['wallet_debit']),
    });
    return await session.end(text);
  } catch (err) {
    return session.fail(err);
  }
}
