/** What GET /stats reports per request (the bench reads it; no dependency on node-llama-cpp here). */
export interface RequestStat {
  readonly at: string;
  readonly stream: boolean;
  readonly status: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Waiting for a free slot of the model. */
  readonly queueMs: number;
  /** From the slot to the first generated token: evaluating the prompt. */
  readonly firstTokenMs: number;
  /** From the first generated token to the last. */
  readonly decodeMs: number;
  readonly totalMs: number;
  /** `stop`, `tool_calls`, `length`, or `abort` (the client went away). */
  readonly finishReason: string;
  readonly toolCalls: number;
}
