/**
 * What the HTTP server needs of a model engine. It lives apart from engine.ts so that the server and its tests
 * type-check without node-llama-cpp installed (only scripts/setup-local-model.sh installs it).
 */
import type { HistoryItem } from './prompt';

export interface GenerateInput {
  readonly history: readonly HistoryItem[];
  /** GBNF text (grammar.ts) the reply must follow. */
  readonly grammar?: string;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly topP?: number;
  readonly seed: number;
  readonly stop: readonly string[];
  readonly signal: AbortSignal;
  readonly onText: (chunk: string) => void;
}

export interface GenerateOutput {
  readonly text: string;
  readonly completionTokens: number;
  readonly stopReason: 'stop' | 'length' | 'abort';
  /** Waiting for a slot. */
  readonly queueMs: number;
  /** From the slot to the first generated token: evaluating the prompt (what the slot did not hold already). */
  readonly firstTokenMs: number;
  /** From the first generated token to the last. */
  readonly decodeMs: number;
}

export interface ModelEngine {
  readonly contextSize: number;
  readonly threads: number;
  readonly loadMs: number;
  readonly busy: { readonly running: number; readonly waiting: number };
  promptTokens(history: readonly HistoryItem[]): number;
  generate(input: GenerateInput): Promise<GenerateOutput>;
}
