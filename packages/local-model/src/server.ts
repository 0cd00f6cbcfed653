/**
 * The OpenAI-compatible HTTP server on 127.0.0.1:
 *
 *   POST /v1/chat/completions   tools (grammar-constrained calls), parallel calls, tool_call_id pairing,
 *                               streaming (SSE, `stream: true`, usage with `stream_options.include_usage`)
 *   GET  /v1/models             the one model this process serves
 *   GET  /health                model, threads, context, slots in use
 *   GET  /stats                 the timings and token counts of the last requests (what the bench reads)
 *
 * Every refusal is an OpenAI-shaped error (errors.ts); an error inside a request answers that request with a 500
 * and leaves the server serving. A Hono app on @hono/node-server (the same stack as the repository's other servers).
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Engine } from './engine';
import { EnvelopeReader, type EnvelopeEvent, type ParsedCall } from './envelope';
import { ApiError, invalidRequest } from './errors';
import { envelopeSchema, SchemaError, type GrammarSchema } from './grammar';
import { historyOf, usesToolGrammar } from './prompt';
import { parseChatRequest, type ChatRequest } from './request';
import type { RequestStat } from './stats';

export interface ServerOptions {
  readonly engine: Engine;
  /** The model id clients name (`model` in the request). */
  readonly modelId: string;
  readonly host: string;
  readonly port: number;
  /** Applied when a request sets no `temperature`. */
  readonly defaultTemperature: number;
  /** Applied when a request sets no `seed`. */
  readonly defaultSeed: number;
  /** Applied when a request sets no `max_completion_tokens`/`max_tokens`. */
  readonly defaultMaxTokens: number;
  /** The most calls one reply may make when parallel calls are on. */
  readonly maxParallelCalls: number;
  readonly fingerprint: string;
  readonly log: (line: string) => void;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;
const STATS_KEPT = 2_000;

const id = (prefix: string): string => `${prefix}${randomBytes(12).toString('hex')}`;

const tooLarge = (): ApiError =>
  new ApiError(
    413,
    'invalid_request_error',
    `the request body is over ${MAX_BODY_BYTES} bytes`,
    null,
    'request_too_large',
  );

function json(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

function errorResponse(err: ApiError): Response {
  return json(err.status, err.body(), err.headers);
}

/** The refusal a failure answers with: its own, or a 500 (logged with its stack) for anything unexpected. */
function apiErrorOf(err: unknown, log: (line: string) => void): ApiError {
  if (err instanceof ApiError) return err;
  log(`error: ${(err as Error)?.stack ?? String(err)}`);
  return new ApiError(500, 'server_error', `the local model failed: ${(err as Error)?.message ?? String(err)}`);
}

/**
 * A server-sent event stream whose head is sent with its first event: until then a refusal (a full queue) is still
 * a plain JSON error with its own status. `opened` resolves with the streaming response at the first `send`.
 */
class EventStream {
  private writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  private readonly encoder = new TextEncoder();
  private open: (r: Response) => void = () => undefined;
  readonly opened = new Promise<Response>((resolve) => (this.open = resolve));

  get started(): boolean {
    return this.writer !== undefined;
  }

  /** Sends `text` as it is (the caller frames it as `data: ...\n\n`), opening the stream first. */
  send(text: string, first?: () => string): void {
    if (this.writer === undefined) {
      const pipe = new TransformStream<Uint8Array, Uint8Array>();
      this.writer = pipe.writable.getWriter();
      this.open(
        new Response(pipe.readable, {
          status: 200,
          headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' },
        }),
      );
      if (first) this.write(first());
    }
    this.write(text);
  }

  /** Ends the stream (after `last`, if given). */
  end(last?: string): void {
    if (last !== undefined) this.send(last);
    void this.writer?.close().catch(() => undefined);
  }

  private write(text: string): void {
    // A client that went away makes the write fail; the generation is aborted by the request's signal.
    void this.writer?.write(this.encoder.encode(text)).catch(() => undefined);
  }
}

/** The grammar for a request, or a 400 naming the tool whose schema cannot become one. */
function grammarOf(req: ChatRequest, maxParallelCalls: number): GrammarSchema | undefined {
  if (!usesToolGrammar(req)) return undefined;
  const choice = req.toolChoice;
  const tools = choice.kind === 'function' ? req.tools.filter((t) => t.name === choice.name) : req.tools;
  try {
    return envelopeSchema({
      tools,
      mode: choice.kind === 'auto' ? 'auto' : 'required',
      maxCalls: req.parallelToolCalls ? maxParallelCalls : 1,
    }).schema;
  } catch (err) {
    if (!(err instanceof SchemaError)) throw err;
    const i = (err as SchemaError & { toolIndex?: number }).toolIndex ?? 0;
    const at = req.tools.findIndex((t) => t.name === tools[i]?.name);
    throw invalidRequest(
      `tool ${tools[i]?.name}: its parameters cannot be turned into a grammar: ${err.message}`,
      `tools[${at}].function.parameters`,
      'invalid_function_parameters',
    );
  }
}

function toolCallJson(call: ParsedCall, callId: string, index?: number) {
  return {
    ...(index !== undefined ? { index } : {}),
    id: callId,
    type: 'function' as const,
    function: { name: call.name, arguments: call.arguments },
  };
}

/** The checks a completion request passes before any generation: media type, JSON, the model, the grammar, the context. */
async function admit(c: Context, o: ServerOptions) {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/json\b/i.test(type)) {
    throw new ApiError(
      415,
      'invalid_request_error',
      'send the body as application/json',
      null,
      'unsupported_media_type',
    );
  }
  const raw = await c.req.text();
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (err) {
    throw invalidRequest(`the body is not valid JSON: ${(err as Error).message}`, null, 'invalid_json');
  }
  const chat = parseChatRequest(body);
  if (chat.model !== o.modelId) {
    throw new ApiError(
      404,
      'invalid_request_error',
      `the model ${JSON.stringify(chat.model)} does not exist here; this server serves ${o.modelId}`,
      'model',
      'model_not_found',
    );
  }
  const grammar = grammarOf(chat, o.maxParallelCalls);
  const history = historyOf(chat);
  const promptTokens = o.engine.promptTokens(history);
  const maxTokens = chat.maxTokens ?? o.defaultMaxTokens;
  if (promptTokens + maxTokens > o.engine.contextSize) {
    throw invalidRequest(
      `this model's context is ${o.engine.contextSize} tokens; the messages take ${promptTokens} and up to ${maxTokens} more were asked for`,
      'messages',
      'context_length_exceeded',
    );
  }
  return { chat, grammar, history, promptTokens, maxTokens };
}

export function startServer(o: ServerOptions): Promise<RunningServer> {
  const stats: RequestStat[] = [];
  const record = (s: RequestStat): void => {
    stats.push(s);
    if (stats.length > STATS_KEPT) stats.shift();
  };

  async function completions(c: Context): Promise<Response> {
    const t0 = Date.now();
    const { chat, grammar, history, promptTokens, maxTokens } = await admit(c, o);

    const abort = new AbortController();
    c.req.raw.signal.addEventListener('abort', () => abort.abort(new Error('the client went away')), { once: true });
    const sse = new EventStream();
    const completionId = id('chatcmpl-');
    const created = Math.floor(Date.now() / 1000);
    const reader = grammar ? new EnvelopeReader() : undefined;
    const callIds: string[] = [];
    const callId = (i: number): string => (callIds[i] ??= id('call_'));
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id: completionId,
      object: 'chat.completion.chunk',
      created,
      model: o.modelId,
      system_fingerprint: o.fingerprint,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    // A stream's head is written with its first event, so a refusal before generation (a full queue) is still a
    // plain JSON error with its status.
    const write = (data: unknown): void =>
      sse.send(
        `data: ${JSON.stringify(data)}\n\n`,
        () => `data: ${JSON.stringify(chunk({ role: 'assistant', content: '' }))}\n\n`,
      );
    if (chat.stream) {
      const finished = generateAndAnswer().then(
        (answer) => {
          if (!sse.started) return answer; // aborted before its first event: nobody is left to answer
          sse.end();
          return sse.opened;
        },
        (err: unknown) => {
          if (!sse.started) throw err;
          // A stream already began: end it with the error as its last event.
          sse.end(`data: ${JSON.stringify(apiErrorOf(err, o.log).body())}\n\n`);
          return sse.opened;
        },
      );
      return Promise.race([sse.opened, finished]);
    }
    return generateAndAnswer();

    async function generateAndAnswer(): Promise<Response> {
      const emit = (events: EnvelopeEvent[]): void => {
        for (const e of events) {
          if (e.kind === 'content') write(chunk({ content: e.text }));
          else write(chunk({ tool_calls: [toolCallJson(e.call, callId(e.index), e.index)] }));
        }
      };
      const out = await o.engine.generate({
        history,
        ...(grammar ? { grammar } : {}),
        maxTokens,
        temperature: chat.temperature ?? o.defaultTemperature,
        ...(chat.topP !== undefined ? { topP: chat.topP } : {}),
        seed: chat.seed ?? o.defaultSeed,
        stop: chat.stop,
        signal: abort.signal,
        onText: (text) => {
          if (reader) {
            const events = reader.push(text);
            if (chat.stream) emit(events);
          } else if (chat.stream) write(chunk({ content: text }));
        },
      });
      const parsed = reader ? reader.finish() : { content: out.text, calls: [] };
      const calls = [...parsed.calls, ...('partialCall' in parsed && parsed.partialCall ? [parsed.partialCall] : [])];
      const finish = out.stopReason === 'length' ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop';
      const usage = {
        prompt_tokens: promptTokens,
        completion_tokens: out.completionTokens,
        total_tokens: promptTokens + out.completionTokens,
      };
      record({
        at: new Date(t0).toISOString(),
        stream: chat.stream,
        status: out.stopReason === 'abort' ? 499 : 200,
        promptTokens,
        completionTokens: out.completionTokens,
        queueMs: out.queueMs,
        firstTokenMs: out.firstTokenMs,
        decodeMs: out.decodeMs,
        totalMs: Date.now() - t0,
        finishReason: out.stopReason === 'abort' ? 'abort' : finish,
        toolCalls: calls.length,
      });
      o.log(
        `chat.completions ${out.stopReason === 'abort' ? 'aborted by the client' : finish}: ${promptTokens} prompt + ` +
          `${out.completionTokens} completion tokens, ${calls.length} call(s), ${Date.now() - t0} ms`,
      );
      // Nobody is left to answer; a stream that began is ended by the caller.
      if (out.stopReason === 'abort') return new Response(null, { status: 499 });
      if (chat.stream) {
        // A call cut off by the token limit is sent last, as far as it got.
        if ('partialCall' in parsed && parsed.partialCall) {
          const i = parsed.calls.length;
          write(chunk({ tool_calls: [toolCallJson(parsed.partialCall, callId(i), i)] }));
        }
        write(chunk({}, finish));
        if (chat.includeUsage) write({ ...chunk({}), choices: [], usage });
        sse.send('data: [DONE]\n\n');
        return new Response(null, { status: 200 }); // the stream is the answer (sse.opened)
      }
      return json(200, {
        id: completionId,
        object: 'chat.completion',
        created,
        model: o.modelId,
        system_fingerprint: o.fingerprint,
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: calls.length > 0 ? null : (parsed.content ?? ''),
              refusal: null,
              ...(calls.length > 0 ? { tool_calls: calls.map((c, i) => toolCallJson(c, callId(i))) } : {}),
            },
            logprobs: null,
            finish_reason: finish,
          },
        ],
        usage,
      });
    }
  }

  const model = { id: o.modelId, object: 'model', created: 0, owned_by: 'ledgerloop-local' };
  const app = new Hono({ strict: false });
  app.post(
    '/v1/chat/completions',
    bodyLimit({ maxSize: MAX_BODY_BYTES, onError: () => errorResponse(tooLarge()) }),
    completions,
  );
  app.get('/v1/models', () => json(200, { object: 'list', data: [model] }));
  app.get('/v1/models/:id', (c) => (c.req.param('id') === o.modelId ? json(200, model) : c.notFound()));
  app.get('/health', () =>
    json(200, {
      status: 'ok',
      model: o.modelId,
      threads: o.engine.threads,
      contextSize: o.engine.contextSize,
      loadMs: o.engine.loadMs,
      ...o.engine.busy,
    }),
  );
  app.get('/stats', () => json(200, { model: o.modelId, threads: o.engine.threads, requests: stats }));
  app.notFound((c) => {
    const path = c.req.path.replace(/\/+$/, '') || '/';
    const known = ['/v1/chat/completions', '/v1/models', '/health', '/stats'].includes(path);
    const message = known
      ? `${c.req.method} is not allowed on ${path}`
      : `unknown request URL: ${c.req.method} ${path}`;
    return errorResponse(
      new ApiError(
        known ? 405 : 404,
        'invalid_request_error',
        message,
        null,
        known ? 'method_not_allowed' : 'unknown_url',
      ),
    );
  });
  app.onError((err) => errorResponse(apiErrorOf(err, o.log)));

  const server = createAdaptorServer({ fetch: (request) => app.fetch(request) }) as http.Server;
  server.requestTimeout = 0; // a generation may take minutes on a busy machine; the client owns the timeout
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://${o.host}:${port}/v1`,
        port,
        close: () =>
          new Promise<void>((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}
