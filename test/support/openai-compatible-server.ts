/**
 * A real HTTP server speaking the Chat Completions wire protocol (`POST /v1/chat/completions`) on 127.0.0.1,
 * for tests that drive the real `openai` client over a real socket. Each test scripts it: a queue of steps,
 * one per HTTP request (a reply with tool calls, a final text, an HTTP error, optionally delayed).
 *
 * - Provider call ids are stable per turn (`call_t<turn>_<i>`), as if the provider replayed a cached answer;
 *   in `regenerate` mode every reply to the same turn gets NEW ids (`call_t<turn>_g<n>_<i>`), as a real
 *   provider's regenerated turn does.
 * - Every request is recorded (parsed body, headers without Authorization, arrival time, outcome).
 * - It checks the tool protocol like a real provider: each assistant tool call must be answered by exactly one
 *   following `role: 'tool'` message with its `tool_call_id`, else HTTP 400.
 * - When the script is exhausted it answers HTTP 500 with a clear message and sets `exhausted`.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { createHttpServer, type ServiceEnv } from '../../services/http-kit';
import type { ChatMessage, ChatRequestBody, RecordedRequest, ScriptStep } from './openai-script';

/** The largest request body accepted (a whole conversation fits many times over). */
const REQUEST_LIMIT_BYTES = 8 * 1024 * 1024;

export * from './openai-script';

export interface OpenAICompatibleServer {
  /** The base URL for the `openai` client, ending in `/v1`. */
  readonly url: string;
  /** Append steps to the queue: each answers one request. */
  script(...steps: ScriptStep[]): void;
  /** Every request received, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** True once a request arrived with the script empty. */
  readonly exhausted: boolean;
  /** Protocol violations seen in requests (a missing tool result, ...). */
  readonly protocolErrors: readonly string[];
  /** Steps not yet used. */
  remaining(): number;
  setRegenerate(on: boolean): void;
  close(): Promise<void>;
}

function protocolViolation(messages: readonly ChatMessage[]): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
    const want = m.tool_calls.map((c) => c.id);
    const got: string[] = [];
    for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j++)
      got.push(messages[j]!.tool_call_id ?? '');
    if (want.length !== got.length || want.some((id) => !got.includes(id))) {
      return `messages[${i}]: tool calls [${want.join(', ')}] answered by tool messages [${got.join(', ')}]`;
    }
  }
  return undefined;
}

function approxTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/** Start a scripted Chat Completions server on 127.0.0.1 with an OS-assigned port. */
export async function startOpenAICompatibleServer(
  opts: { regenerate?: boolean } = {},
): Promise<OpenAICompatibleServer> {
  const queue: ScriptStep[] = [];
  const requests: RecordedRequest[] = [];
  const protocolErrors: string[] = [];
  const servedPerTurn = new Map<number, number>();
  const timers = new Set<NodeJS.Timeout>();
  let regenerate = opts.regenerate ?? false;
  let exhausted = false;
  let completions = 0;

  function send(
    res: http.ServerResponse,
    rec: RecordedRequest,
    status: number,
    body: unknown,
    headers: Readonly<Record<string, string>> = {},
  ): Response {
    rec.status = status;
    if (res.destroyed || res.writableEnded) rec.aborted = true;
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
  }

  function errorBody(message: string, type: string, code: string | null): unknown {
    return { error: { message, type, param: null, code } };
  }

  function completionFor(step: Extract<ScriptStep, { kind: 'tool_calls' | 'final' }>, rec: RecordedRequest): unknown {
    const served = (servedPerTurn.get(rec.turn) ?? 0) + 1;
    servedPerTurn.set(rec.turn, served);
    completions += 1;
    const toolCalls =
      step.kind === 'tool_calls'
        ? step.calls.map((c, i) => ({
            id: c.id ?? (regenerate ? `call_t${rec.turn}_g${served}_${i}` : `call_t${rec.turn}_${i}`),
            type: 'function' as const,
            function: {
              name: c.name,
              arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
            },
          }))
        : [];
    rec.toolCallIds = toolCalls.map((c) => c.id);
    const content = step.kind === 'final' ? step.text : (step.content ?? null);
    const message = {
      role: 'assistant',
      content,
      refusal: step.kind === 'final' ? (step.refusal ?? null) : null,
      ...(toolCalls.length > 0 || (step.kind === 'final' && step.emptyToolCalls) ? { tool_calls: toolCalls } : {}),
    };
    const prompt = approxTokens(JSON.stringify(rec.body?.messages ?? []));
    const completion = approxTokens(JSON.stringify(message));
    return {
      id: `chatcmpl-test-${completions}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: rec.body?.model ?? 'test-model',
      choices: [
        {
          index: 0,
          message,
          logprobs: null,
          finish_reason:
            toolCalls.length > 0 ? 'tool_calls' : step.kind === 'final' ? (step.finishReason ?? 'stop') : 'stop',
        },
      ],
      ...(step.omitUsage
        ? {}
        : { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } }),
    };
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): Response | Promise<Response> {
    let body: ChatRequestBody | undefined;
    try {
      body = raw ? (JSON.parse(raw) as ChatRequestBody) : undefined;
    } catch {
      body = undefined;
    }
    const { authorization, ...headers } = req.headers;
    const rec: RecordedRequest = {
      seq: requests.length + 1,
      at: Date.now(),
      method: req.method ?? '',
      path: req.url ?? '',
      headers,
      hadAuthorization: authorization !== undefined,
      body,
      turn: 1 + (body?.messages?.filter((m) => m.role === 'assistant').length ?? 0),
      outcome: 'reply',
      status: 0,
      toolCallIds: [],
      aborted: false,
    };
    requests.push(rec);
    res.on('close', () => {
      if (!res.writableFinished) rec.aborted = true;
    });

    if (req.method !== 'POST' || !req.url?.startsWith('/v1/chat/completions')) {
      rec.outcome = 'not_found';
      return send(
        res,
        rec,
        404,
        errorBody(`test server: no route ${req.method} ${req.url}`, 'invalid_request_error', 'not_found'),
      );
    }
    const violation =
      body && Array.isArray(body.messages)
        ? protocolViolation(body.messages)
        : 'request body is not a chat completion request';
    if (violation !== undefined) {
      rec.outcome = 'protocol_error';
      protocolErrors.push(`request #${rec.seq}: ${violation}`);
      return send(
        res,
        rec,
        400,
        errorBody(`test server: ${violation}`, 'invalid_request_error', 'invalid_tool_messages'),
      );
    }
    const step = queue.shift();
    if (step === undefined) {
      exhausted = true;
      rec.outcome = 'exhausted';
      const msg = `openai-compatible test server: script exhausted at request #${rec.seq} (turn ${rec.turn})`;
      return send(res, rec, 500, errorBody(msg, 'server_error', 'script_exhausted'));
    }
    const answer = (): Response => {
      if (step.kind === 'error') {
        rec.outcome = 'error';
        return send(
          res,
          rec,
          step.status,
          errorBody(step.message ?? `HTTP ${step.status}`, 'test_fault', `http_${step.status}`),
          step.headers,
        );
      }
      return send(res, rec, 200, completionFor(step, rec));
    };
    if (step.delayMs === undefined || step.delayMs <= 0) return answer();
    const delay = step.delayMs;
    return new Promise<Response>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve(answer());
      }, delay);
      timers.add(timer);
    });
  }

  const app = new Hono<ServiceEnv>();
  // A body too large is refused as a provider would (Hono's body limit; the rest of the body is drained).
  app.use(
    '*',
    bodyLimit({
      maxSize: REQUEST_LIMIT_BYTES,
      onError: () =>
        new Response(
          JSON.stringify(
            errorBody(
              `request body exceeds ${REQUEST_LIMIT_BYTES} bytes`,
              'invalid_request_error',
              'request_too_large',
            ),
          ),
          { status: 413, headers: { 'content-type': 'application/json' } },
        ),
    }),
  );
  app.all('*', async (c) => handle(c.env.incoming, c.env.outgoing, await c.req.text()));
  const server = createHttpServer((request, env) => app.fetch(request, env));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    script: (...steps) => void queue.push(...steps),
    requests,
    get exhausted() {
      return exhausted;
    },
    protocolErrors,
    remaining: () => queue.length,
    setRegenerate: (on) => {
      regenerate = on;
    },
    close: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
