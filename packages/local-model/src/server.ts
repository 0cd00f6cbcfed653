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
import type { GenerateOutput, ModelEngine } from './model-engine';
import { EnvelopeReader, type EnvelopeEvent, type EnvelopeResult, type ParsedCall } from './envelope';
import { ApiError, invalidRequest } from './errors';
import { envelopeGrammar, SchemaError } from './grammar';
import { historyOf, usesToolGrammar } from './prompt';
import { parseChatRequest, type ChatRequest } from './request';
import type { RequestStat } from './stats';

export interface ServerOptions {
  readonly engine: ModelEngine;
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

/** The grammar (GBNF) for a request, or a 400 naming the tool whose schema cannot become one. */
function grammarOf(req: ChatRequest, maxParallelCalls: number): string | undefined {
  if (!usesToolGrammar(req)) return undefined;
  const choice = req.toolChoice;
  const tools = choice.kind === 'function' ? req.tools.filter((t) => t.name === choice.name) : req.tools;
  try {
    return envelopeGrammar({
      tools,
      mode: choice.kind === 'auto' ? 'auto' : 'required',
      maxCalls: req.parallelToolCalls ? maxParallelCalls : 1,
    }).gbnf;
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

type Admitted = Awaited<ReturnType<typeof admit>>;

/** What one generation gave: the engine's output, the reply it parses to, and the counts a response carries. */
interface Generated {
  readonly out: GenerateOutput;
  readonly parsed: EnvelopeResult | { readonly content: string; readonly calls: readonly ParsedCall[] };
  /** The calls made, a call cut off by the token limit last (as far as it got). */
  readonly calls: readonly ParsedCall[];
  readonly finish: 'length' | 'tool_calls' | 'stop';
  readonly usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

/** The ids of one completion and of its calls, and the shape of its stream chunks. */
class CompletionIds {
  readonly id = id('chatcmpl-');
  readonly created = Math.floor(Date.now() / 1000);
  private readonly callIds: string[] = [];

  constructor(private readonly o: ServerOptions) {}

  callId(i: number): string {
    return (this.callIds[i] ??= id('call_'));
  }

  chunk(delta: Record<string, unknown>, finish: string | null = null) {
    const { id: completionId, created, o } = this;
    return {
      id: completionId,
      object: 'chat.completion.chunk',
      created,
      model: o.modelId,
      system_fingerprint: o.fingerprint,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
  }

  /** The whole reply (`chat.completion`), for a request that did not ask for a stream. */
  reply(g: Generated) {
    const { calls, parsed } = g;
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.o.modelId,
      system_fingerprint: this.o.fingerprint,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: calls.length > 0 ? null : (parsed.content ?? ''),
            refusal: null,
            ...(calls.length > 0 ? { tool_calls: calls.map((c, i) => toolCallJson(c, this.callId(i))) } : {}),
          },
          logprobs: null,
          finish_reason: g.finish,
        },
      ],
      usage: g.usage,
    };
  }
}

/**
 * Runs the model for an admitted request. Under a grammar it reads the envelope itself, so no caller can lose the
 * calls; `onText` sees each piece of text as it comes, with the envelope's events for it (undefined without tools).
 */
async function generate(
  a: Admitted,
  o: ServerOptions,
  signal: AbortSignal,
  onText: (text: string, events: EnvelopeEvent[] | undefined) => void,
): Promise<Generated> {
  const { chat, grammar, history, promptTokens, maxTokens } = a;
  const reader = grammar ? new EnvelopeReader() : undefined;
  const out = await o.engine.generate({
    history,
    ...(grammar ? { grammar } : {}),
    maxTokens,
    temperature: chat.temperature ?? o.defaultTemperature,
    ...(chat.topP !== undefined ? { topP: chat.topP } : {}),
    seed: chat.seed ?? o.defaultSeed,
    stop: chat.stop,
    signal,
    onText: (text) => onText(text, reader?.push(text)),
  });
  const parsed = reader ? reader.finish() : { content: out.text, calls: [] };
  const partial = 'partialCall' in parsed && parsed.partialCall ? [parsed.partialCall] : [];
  const calls = [...parsed.calls, ...partial];
  const finish = out.stopReason === 'length' ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop';
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: out.completionTokens,
    total_tokens: promptTokens + out.completionTokens,
  };
  return { out, parsed, calls, finish, usage };
}

/** The request's line in `GET /stats`. */
function statOf(t0: number, a: Admitted, g: Generated): RequestStat {
  const aborted = g.out.stopReason === 'abort';
  return {
    at: new Date(t0).toISOString(),
    stream: a.chat.stream,
    status: aborted ? 499 : 200,
    promptTokens: a.promptTokens,
    completionTokens: g.out.completionTokens,
    queueMs: g.out.queueMs,
    firstTokenMs: g.out.firstTokenMs,
    decodeMs: g.out.decodeMs,
    totalMs: Date.now() - t0,
    finishReason: aborted ? 'abort' : g.finish,
    toolCalls: g.calls.length,
  };
}

/**
 * A streamed completion: each piece as a chunk as the model makes it (tool calls once each is complete), then
 * a call cut off by the token limit, the finish, the usage (when asked for) and `[DONE]`. Resolves with the
 * stream's response at its first event; a refusal before it (a full queue) is still a plain JSON error.
 */
function streamCompletion(
  a: Admitted,
  o: ServerOptions,
  signal: AbortSignal,
  done: (g: Generated) => void,
): Promise<Response> {
  const ids = new CompletionIds(o);
  const sse = new EventStream();
  const write = (data: unknown): void =>
    sse.send(
      `data: ${JSON.stringify(data)}\n\n`,
      () => `data: ${JSON.stringify(ids.chunk({ role: 'assistant', content: '' }))}\n\n`,
    );
  const emit = (events: EnvelopeEvent[]): void => {
    for (const e of events) {
      if (e.kind === 'content') write(ids.chunk({ content: e.text }));
      else write(ids.chunk({ tool_calls: [toolCallJson(e.call, ids.callId(e.index), e.index)] }));
    }
  };
  const run = async (): Promise<void> => {
    const g = await generate(a, o, signal, (text, events) =>
      events ? emit(events) : write(ids.chunk({ content: text })),
    );
    done(g);
    if (g.out.stopReason === 'abort') return; // nobody is left to answer
    const { parsed } = g;
    if ('partialCall' in parsed && parsed.partialCall) {
      const i = parsed.calls.length;
      write(ids.chunk({ tool_calls: [toolCallJson(parsed.partialCall, ids.callId(i), i)] }));
    }
    write(ids.chunk({}, g.finish));
    if (a.chat.includeUsage) write({ ...ids.chunk({}), choices: [], usage: g.usage });
    sse.send('data: [DONE]\n\n');
  };
  const finished = run().then(
    () => {
      if (!sse.started) return new Response(null, { status: 499 }); // aborted before its first event
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

/** `POST /v1/chat/completions`: admit, then a stream or a whole reply; every request recorded and logged. */
async function completions(c: Context, o: ServerOptions, record: (s: RequestStat) => void): Promise<Response> {
  const t0 = Date.now();
  const a = await admit(c, o);
  const abort = new AbortController();
  c.req.raw.signal.addEventListener('abort', () => abort.abort(new Error('the client went away')), { once: true });
  const done = (g: Generated): void => {
    record(statOf(t0, a, g));
    o.log(
      `chat.completions ${g.out.stopReason === 'abort' ? 'aborted by the client' : g.finish}: ${a.promptTokens} prompt + ` +
        `${g.out.completionTokens} completion tokens, ${g.calls.length} call(s), ${Date.now() - t0} ms`,
    );
  };
  if (a.chat.stream) return streamCompletion(a, o, abort.signal, done);
  const g = await generate(a, o, abort.signal, () => undefined);
  done(g);
  return g.out.stopReason === 'abort' ? new Response(null, { status: 499 }) : json(200, new CompletionIds(o).reply(g));
}

/** The server's routes (Hono): the completions, the model list, health and the request stats. */
function localModelApp(o: ServerOptions): Hono {
  const stats: RequestStat[] = [];
  const record = (s: RequestStat): void => {
    stats.push(s);
    if (stats.length > STATS_KEPT) stats.shift();
  };
  const model = { id: o.modelId, object: 'model', created: 0, owned_by: 'ledgerloop-local' };
  const app = new Hono({ strict: false });
  app.post(
    '/v1/chat/completions',
    bodyLimit({ maxSize: MAX_BODY_BYTES, onError: () => errorResponse(tooLarge()) }),
    (c) => completions(c, o, record),
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
  return app;
}

export function startServer(o: ServerOptions): Promise<RunningServer> {
  const app = localModelApp(o);
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
