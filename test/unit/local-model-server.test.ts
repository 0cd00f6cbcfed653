/**
 * The local model's HTTP server (packages/local-model/src/server.ts) with a scripted engine in place of the model:
 * a reply and a stream in the OpenAI shape, the stream's head sent with its first event (a full queue before it is
 * still a plain 429), an error after the head ending the stream as its last event, a client that goes away
 * aborting the generation, the body limit, and typed 404/405/415.
 */
import http from 'node:http';
import type { GenerateInput, GenerateOutput, ModelEngine } from '../../packages/local-model/src/model-engine';
import { ApiError } from '../../packages/local-model/src/errors';
import { startServer, type RunningServer } from '../../packages/local-model/src/server';

const MODEL = 'test-model';

/** What the scripted engine does for one request: emit chunks, then return, or throw (before or after them). */
interface Script {
  chunks?: string[];
  throwBefore?: Error;
  throwAfter?: Error;
  /** Wait for the request's abort, and report it. */
  waitForAbort?: boolean;
}

let script: Script = {};
/** Called when the engine sees its request's abort. */
let onAbort: () => void = () => undefined;

function out(text: string, stopReason: GenerateOutput['stopReason'] = 'stop'): GenerateOutput {
  return { text, completionTokens: text.length, stopReason, queueMs: 0, firstTokenMs: 0, decodeMs: 0 };
}

const engine = {
  threads: 1,
  contextSize: 4096,
  loadMs: 0,
  busy: { running: 0, waiting: 0 },
  promptTokens: () => 10,
  async generate(input: GenerateInput): Promise<GenerateOutput> {
    if (script.throwBefore) throw script.throwBefore;
    for (const c of script.chunks ?? []) input.onText(c);
    if (script.throwAfter) throw script.throwAfter;
    if (script.waitForAbort) {
      await new Promise<void>((resolve) =>
        input.signal.addEventListener('abort', () => {
          onAbort();
          resolve();
        }),
      );
      return out('', 'abort');
    }
    return out((script.chunks ?? []).join(''));
  },
} as unknown as ModelEngine;

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({
    engine,
    modelId: MODEL,
    host: '127.0.0.1',
    port: 0,
    defaultTemperature: 0,
    defaultSeed: 0,
    defaultMaxTokens: 64,
    maxParallelCalls: 4,
    fingerprint: 'fp',
    log: () => undefined,
  });
});
afterAll(() => server?.close());

const chat = (extra: Record<string, unknown> = {}) =>
  fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });

/** The `data:` events of an SSE body, parsed (`[DONE]` as the string). */
function eventsOf(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice('data: '.length))
    .map((d) => (d === '[DONE]' ? d : (JSON.parse(d) as unknown)));
}

test('a reply in the chat.completion shape', async () => {
  script = { chunks: ['Hel', 'lo'] };
  const res = await chat();
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  expect(await res.json()).toMatchObject({
    object: 'chat.completion',
    model: MODEL,
    choices: [{ message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
});

test('a reply with tools carries the calls the model wrote (finish_reason tool_calls), not an empty stop', async () => {
  script = { chunks: ['{"tool_calls":[{"name":"lookup",', '"arguments":{"id":"o1"}}]}'] };
  const tools = [
    {
      type: 'function',
      function: { name: 'lookup', parameters: { type: 'object', properties: { id: { type: 'string' } } } },
    },
  ];
  const body = (await (await chat({ tools })).json()) as {
    choices: Array<{ finish_reason: string; message: { tool_calls?: Array<{ function: { name: string } }> } }>;
  };
  expect(body.choices[0]!.finish_reason).toBe('tool_calls');
  expect(body.choices[0]!.message.tool_calls?.map((c) => c.function.name)).toEqual(['lookup']);
  // control: without tools the same text is plain content
  const plain = (await (await chat()).json()) as typeof body;
  expect(plain.choices[0]!.finish_reason).toBe('stop');
});

test('a stream: the role first, a chunk per piece, the finish, the usage, then [DONE]', async () => {
  script = { chunks: ['Hel', 'lo'] };
  const res = await chat({ stream: true, stream_options: { include_usage: true } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  const events = eventsOf(await res.text()) as Array<{ choices?: Array<{ delta: unknown; finish_reason: unknown }> }>;
  expect(events.map((e) => (e === ('[DONE]' as unknown) ? e : e.choices?.[0]?.delta))).toEqual([
    { role: 'assistant', content: '' },
    { content: 'Hel' },
    { content: 'lo' },
    {},
    undefined, // the usage event has no choices
    '[DONE]',
  ]);
  expect(events[3]).toMatchObject({ choices: [{ finish_reason: 'stop' }] });
  expect(events[4]).toMatchObject({ usage: { total_tokens: 15 } });
});

test('a refusal before the first event of a stream is a plain JSON error with its status (a full queue: 429)', async () => {
  script = { throwBefore: new ApiError(429, 'rate_limit_error', 'the queue is full', null, 'queue_full') };
  const res = await chat({ stream: true });
  expect(res.status).toBe(429);
  expect(await res.json()).toEqual({
    error: { message: 'the queue is full', type: 'rate_limit_error', param: null, code: 'queue_full' },
  });
});

test('an error after the stream began ends it with the error as its last event; the server keeps serving', async () => {
  script = { chunks: ['par'], throwAfter: new Error('the model fell over') };
  const res = await chat({ stream: true });
  expect(res.status).toBe(200);
  const events = eventsOf(await res.text());
  expect(events.at(-1)).toMatchObject({ error: { type: 'server_error', message: /the model fell over/ } });
  script = { chunks: ['ok'] };
  expect((await chat()).status).toBe(200);
});

test('a client that goes away aborts the generation', async () => {
  script = { chunks: ['a'], waitForAbort: true };
  const abortSeen = new Promise<void>((resolve) => (onAbort = resolve));
  await new Promise<void>((resolve, reject) => {
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true });
    const req = http.request(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    // The head arrives with the first event; then the client hangs up.
    req.on('response', (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end(body);
  });
  await abortSeen;
});

test('a body over 4 MiB is 413; a body that is not JSON 400; not application/json 415', async () => {
  const big = await fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: 'x'.repeat(4 * 1024 * 1024 + 1),
  });
  expect(big.status).toBe(413);
  expect(await big.json()).toMatchObject({ error: { code: 'request_too_large' } });
  const notJson = await fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"model":',
  });
  expect(notJson.status).toBe(400);
  expect(await notJson.json()).toMatchObject({ error: { code: 'invalid_json' } });
  const text = await fetch(`${server.url}/chat/completions`, { method: 'POST', body: 'hi' });
  expect(text.status).toBe(415);
});

test('the models, health and typed 404/405', async () => {
  expect(await (await fetch(`${server.url}/models`)).json()).toMatchObject({ data: [{ id: MODEL }] });
  expect((await fetch(`${server.url}/models/${MODEL}`)).status).toBe(200);
  const other = await fetch(`${server.url}/models/other`);
  expect(other.status).toBe(404);
  expect(await other.json()).toMatchObject({ error: { code: 'unknown_url' } });
  const base = server.url.replace(/\/v1$/, '');
  expect(await (await fetch(`${base}/health`)).json()).toMatchObject({ status: 'ok', model: MODEL });
  const wrongMethod = await fetch(`${server.url}/chat/completions`);
  expect(wrongMethod.status).toBe(405);
  expect(await wrongMethod.json()).toMatchObject({ error: { code: 'method_not_allowed' } });
});
