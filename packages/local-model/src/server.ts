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
 * and leaves the server serving.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(
          new ApiError(
            413,
            'invalid_request_error',
            `the request body is over ${MAX_BODY_BYTES} bytes`,
            null,
            'request_too_large',
          ),
        );
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sendError(res: http.ServerResponse, err: ApiError): void {
  sendJson(res, err.status, err.body(), err.headers);
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

export function startServer(o: ServerOptions): Promise<RunningServer> {
  const stats: RequestStat[] = [];
  const record = (s: RequestStat): void => {
    stats.push(s);
    if (stats.length > STATS_KEPT) stats.shift();
  };

  async function completions(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const t0 = Date.now();
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/json\b/i.test(type)) {
      throw new ApiError(
        415,
        'invalid_request_error',
        'send the body as application/json',
        null,
        'unsupported_media_type',
      );
    }
    const raw = await readBody(req);
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

    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort(new Error('the client went away'));
    });
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
    const write = (data: unknown): void => {
      if (!res.headersSent) {
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
        });
        res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: '' }))}\n\n`);
      }
      if (!res.writableEnded) res.write(`data: ${JSON.stringify(data)}\n\n`);
    };
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
    if (out.stopReason === 'abort') return;
    if (chat.stream) {
      // A call cut off by the token limit is sent last, as far as it got.
      if ('partialCall' in parsed && parsed.partialCall) {
        const i = parsed.calls.length;
        write(chunk({ tool_calls: [toolCallJson(parsed.partialCall, callId(i), i)] }));
      }
      write(chunk({}, finish));
      if (chat.includeUsage) write({ ...chunk({}), choices: [], usage });
      res.end('data: [DONE]\n\n');
      return;
    }
    sendJson(res, 200, {
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

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://local');
    const route = `${req.method ?? ''} ${url.pathname.replace(/\/+$/, '') || '/'}`;
    switch (route) {
      case 'POST /v1/chat/completions':
        return completions(req, res);
      case 'GET /v1/models':
        return sendJson(res, 200, {
          object: 'list',
          data: [{ id: o.modelId, object: 'model', created: 0, owned_by: 'ledgerloop-local' }],
        });
      case `GET /v1/models/${o.modelId}`:
        return sendJson(res, 200, { id: o.modelId, object: 'model', created: 0, owned_by: 'ledgerloop-local' });
      case 'GET /health':
        return sendJson(res, 200, {
          status: 'ok',
          model: o.modelId,
          threads: o.engine.threads,
          contextSize: o.engine.contextSize,
          loadMs: o.engine.loadMs,
          ...o.engine.busy,
        });
      case 'GET /stats':
        return sendJson(res, 200, { model: o.modelId, threads: o.engine.threads, requests: stats });
      default: {
        const known = ['/v1/chat/completions', '/v1/models', '/health', '/stats'].includes(url.pathname);
        throw new ApiError(
          known ? 405 : 404,
          'invalid_request_error',
          known
            ? `${req.method} is not allowed on ${url.pathname}`
            : `unknown request URL: ${req.method} ${url.pathname}`,
          null,
          known ? 'method_not_allowed' : 'unknown_url',
        );
      }
    }
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const apiError =
        err instanceof ApiError
          ? err
          : new ApiError(500, 'server_error', `the local model failed: ${(err as Error)?.message ?? String(err)}`);
      if (!(err instanceof ApiError)) o.log(`error: ${(err as Error)?.stack ?? String(err)}`);
      if (res.headersSent) {
        // A stream already began: end it with the error as its last event.
        if (!res.writableEnded) res.end(`data: ${JSON.stringify(apiError.body())}\n\n`);
        return;
      }
      sendError(res, apiError);
    });
  });
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
