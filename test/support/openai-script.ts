/**
 * The script and records of the OpenAI-compatible test server: step constructors (replies and faults) and the
 * shapes of what it records. See openai-compatible-server.ts.
 */
export interface ToolCallSpec {
  readonly name: string;
  /** An object is serialized as JSON; a string is sent verbatim (use it for malformed arguments). */
  readonly arguments: unknown;
  /** A fixed provider call id instead of the generated one. */
  readonly id?: string;
}

export type ScriptStep =
  | {
      readonly kind: 'tool_calls';
      readonly calls: readonly ToolCallSpec[];
      readonly content?: string | null;
      readonly delayMs?: number;
      /** Answer without a `usage` object, as some compatible servers do. */
      readonly omitUsage?: boolean;
    }
  | {
      readonly kind: 'final';
      readonly text: string | null;
      readonly delayMs?: number;
      /** Default `stop`; `length` is a reply cut off at the output limit. */
      readonly finishReason?: 'stop' | 'length' | 'content_filter';
      /** The model's refusal text (its `content` is then null). */
      readonly refusal?: string;
      readonly omitUsage?: boolean;
      /** Send `tool_calls: []` rather than leaving the field out. */
      readonly emptyToolCalls?: boolean;
    }
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly message?: string;
      readonly headers?: Readonly<Record<string, string>>;
      readonly delayMs?: number;
    };

/** Step constructors for replies. */
export const reply = {
  toolCalls: (...calls: ToolCallSpec[]): ScriptStep => ({ kind: 'tool_calls', calls }),
  final: (text: string): ScriptStep => ({ kind: 'final', text }),
  /** A tool call whose argument text is not JSON. */
  malformed: (name: string, rawArguments: string): ScriptStep => ({
    kind: 'tool_calls',
    calls: [{ name, arguments: rawArguments }],
  }),
  /** A reply cut off at the output limit: some text, no tool call, `finish_reason: 'length'`. */
  truncated: (text: string): ScriptStep => ({ kind: 'final', text, finishReason: 'length' }),
  /** A refusal: `content` null, `refusal` set, no tool call. */
  refusal: (text: string): ScriptStep => ({ kind: 'final', text: null, refusal: text }),
  /** Any step, answered only after `delayMs` (past an attempt timeout, the client has given up by then). */
  slow: (delayMs: number, step: ScriptStep): ScriptStep => ({ ...step, delayMs }),
};

/** Step constructors for faults. */
export const fault = {
  rateLimited: (opts: { retryAfterSeconds?: number; retryAfterMs?: number } = {}): ScriptStep => ({
    kind: 'error',
    status: 429,
    message: 'Rate limit reached (test server)',
    headers: {
      ...(opts.retryAfterSeconds !== undefined ? { 'retry-after': String(opts.retryAfterSeconds) } : {}),
      ...(opts.retryAfterMs !== undefined ? { 'retry-after-ms': String(opts.retryAfterMs) } : {}),
    },
  }),
  serverError: (status = 500): ScriptStep => ({
    kind: 'error',
    status,
    message: 'The server had an error (test server)',
  }),
  status: (status: number, message = `HTTP ${status} (test server)`): ScriptStep => ({
    kind: 'error',
    status,
    message,
  }),
};

export type RequestOutcome = 'reply' | 'error' | 'exhausted' | 'protocol_error' | 'not_found';

export interface RecordedRequest {
  /** 1-based arrival order. */
  readonly seq: number;
  /** Arrival time, ms since the epoch. */
  readonly at: number;
  readonly method: string;
  readonly path: string;
  /** Request headers, lower-cased, Authorization removed. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly hadAuthorization: boolean;
  readonly body: ChatRequestBody | undefined;
  /** 1 + the number of assistant messages in the request. */
  readonly turn: number;
  outcome: RequestOutcome;
  status: number;
  /** Provider call ids in the reply to this request. */
  toolCallIds: string[];
  /** The client closed the connection before the (delayed) reply was written. */
  aborted: boolean;
}

export interface ChatMessage {
  readonly role: string;
  readonly content?: unknown;
  readonly tool_calls?: readonly { id: string; type: string; function: { name: string; arguments: string } }[];
  readonly tool_call_id?: string;
}

export interface ChatRequestBody {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly unknown[];
  readonly [key: string]: unknown;
}
