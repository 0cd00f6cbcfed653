/**
 * The local model server (packages/local-model) with the REAL model, through the real `openai` client: tool calls
 * under the grammar, streaming, tool_call_id pairing, typed errors, a client that goes away. It needs the local
 * model installed (scripts/setup-local-model.sh, about 830 MB), so it runs only when it is, like the live OpenAI
 * test; LEDGERLOOP_LOCAL_MODEL=required (the CI step of the local model) makes its absence a failure. It asserts
 * the protocol, never that the model is smart.
 */
import OpenAI from 'openai';
import { z } from 'zod';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { localModelInstalled, startLocalModel, type LocalModelProcess } from '../../lab/local-model/server-process';
import { chatCompletionTools } from '../../src/planner/tool-schemas';

const installed = localModelInstalled();
const required = process.env.LEDGERLOOP_LOCAL_MODEL === 'required';

jest.setTimeout(600_000);

const tools = chatCompletionTools();
const toolNames = tools.map((t) => t.function.name);
const goal: ChatCompletionMessageParam[] = [
  {
    role: 'system',
    content: 'You are the planner of a governed agent run. You pursue the user goal by proposing tool calls.',
  },
  { role: 'user', content: 'Charge 12.50 EUR (1250 minor units) to account acct_1 for order 1001.' },
];

if (!installed && !required) {
  test.skip('the local model server (skipped: run scripts/setup-local-model.sh to install the local model)', () =>
    undefined);
} else {
  let server: LocalModelProcess;
  let client: OpenAI;
  let model: string;
  beforeAll(async () => {
    if (!installed) throw new Error('LEDGERLOOP_LOCAL_MODEL=required but the local model is not installed');
    server = await startLocalModel();
    client = new OpenAI({ apiKey: 'no-key', baseURL: server.baseUrl, maxRetries: 0 });
    model = server.modelId;
  });
  afterAll(async () => {
    await server?.stop();
  });

  test('a tool call under the grammar: an offered tool, JSON arguments, ids, usage', async () => {
    const r = await client.chat.completions.create({
      model,
      messages: goal,
      tools,
      tool_choice: 'required',
      max_completion_tokens: 160,
    });
    const choice = r.choices[0]!;
    expect(['tool_calls', 'length']).toContain(choice.finish_reason);
    const calls = choice.message.tool_calls ?? [];
    expect(calls.length).toBeGreaterThan(0);
    for (const c of calls) {
      expect(c.type).toBe('function');
      if (c.type !== 'function') continue;
      expect(toolNames).toContain(c.function.name);
      expect(c.id).toMatch(/^call_[0-9a-f]{24}$/);
      if (choice.finish_reason === 'tool_calls') expect(() => JSON.parse(c.function.arguments)).not.toThrow();
    }
    expect(new Set(calls.map((c) => c.id)).size).toBe(calls.length);
    expect(r.usage!.prompt_tokens).toBeGreaterThan(100);
    expect(r.usage!.completion_tokens).toBeGreaterThan(0);
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
  });

  test('sampled hot (temperature 1.3, 8 seeds), every call the real model makes is valid against its schema', async () => {
    const judges = new Map(
      tools.map((t) => [
        t.function.name,
        z.fromJSONSchema(t.function.parameters as Parameters<typeof z.fromJSONSchema>[0]),
      ]),
    );
    let calls = 0;
    for (let seed = 1; seed <= 8; seed++) {
      const r = await client.chat.completions.create({
        model,
        messages: goal,
        tools,
        tool_choice: 'required',
        temperature: 1.3,
        seed,
        max_completion_tokens: 200,
      });
      if (r.choices[0]!.finish_reason !== 'tool_calls') continue; // cut at the limit: its arguments never closed
      for (const c of r.choices[0]!.message.tool_calls ?? []) {
        if (c.type !== 'function') continue;
        const verdict = judges.get(c.function.name)!.safeParse(JSON.parse(c.function.arguments));
        if (!verdict.success)
          throw new Error(`seed ${seed}: ${c.function.name} ${c.function.arguments}: ${verdict.error.message}`);
        calls++;
      }
    }
    expect(calls).toBeGreaterThan(0);
  });

  test('streaming: the deltas assemble into the calls, then finish_reason, then usage', async () => {
    const stream = await client.chat.completions.create({
      model,
      messages: goal,
      tools,
      tool_choice: { type: 'function', function: { name: 'wallet_debit' } },
      parallel_tool_calls: false,
      max_completion_tokens: 160,
      stream: true,
      stream_options: { include_usage: true },
    });
    const calls = new Map<number, { id: string; name: string; args: string }>();
    const finishes: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice?.finish_reason) finishes.push(choice.finish_reason);
      for (const d of choice?.delta.tool_calls ?? []) {
        const c = calls.get(d.index) ?? { id: '', name: '', args: '' };
        calls.set(d.index, {
          id: d.id ?? c.id,
          name: d.function?.name ?? c.name,
          args: c.args + (d.function?.arguments ?? ''),
        });
      }
    }
    expect(finishes).toHaveLength(1);
    expect(['tool_calls', 'length']).toContain(finishes[0]);
    // Forced to one tool, parallel calls off: exactly one call of that tool.
    expect([...calls.values()].map((c) => c.name)).toEqual(['wallet_debit']);
    if (finishes[0] === 'tool_calls') expect(() => JSON.parse(calls.get(0)!.args)).not.toThrow();
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  test('tool results are paired by tool_call_id: any order is accepted, an unknown id is a typed 400', async () => {
    const assistant: ChatCompletionMessageParam = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'wallet_debit', arguments: '{"account":"acct_1"}' } },
        {
          id: 'call_b',
          type: 'function',
          function: { name: 'orders_mark_fulfilled', arguments: '{"orderId":"1001"}' },
        },
      ],
    };
    const results = (ids: string[]): ChatCompletionMessageParam[] =>
      ids.map((id) => ({
        role: 'tool',
        tool_call_id: id,
        content: JSON.stringify({ state: 'SUCCEEDED', data: { id } }),
      }));
    const ok = await client.chat.completions.create({
      model,
      messages: [...goal, assistant, ...results(['call_b', 'call_a'])],
      tools,
      max_completion_tokens: 48,
    });
    expect(ok.choices).toHaveLength(1);
    await expect(
      client.chat.completions.create({
        model,
        messages: [...goal, assistant, ...results(['call_a', 'call_x'])],
        tools,
      }),
    ).rejects.toMatchObject({ status: 400, code: 'tool_call_id_unknown', param: 'messages[4].tool_call_id' });
    await expect(
      client.chat.completions.create({ model, messages: [...goal, assistant, ...results(['call_a'])], tools }),
    ).rejects.toMatchObject({ status: 400, code: 'tool_call_unanswered' });
  });

  test('bad requests get typed OpenAI errors, and the server keeps serving', async () => {
    await expect(client.chat.completions.create({ model: 'gpt-4o', messages: goal })).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
    });
    await expect(client.chat.completions.create({ model, messages: goal, n: 2 })).rejects.toMatchObject({
      status: 400,
      code: 'unsupported_parameter',
    });
    await expect(
      client.chat.completions.create({ model, messages: goal, max_completion_tokens: 100_000 }),
    ).rejects.toMatchObject({ status: 400, code: 'context_length_exceeded' });
    const raw = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model": ',
    });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    const health = await fetch(new URL('/health', server.baseUrl));
    expect(health.status).toBe(200);
  });

  test('a client that goes away mid-generation frees the model for the next request', async () => {
    const abort = new AbortController();
    const slow = client.chat.completions.create(
      {
        model,
        messages: [{ role: 'user', content: 'Write a long story about a ledger.' }],
        max_completion_tokens: 2000,
      },
      { signal: abort.signal },
    );
    setTimeout(() => abort.abort(), 1_500);
    await expect(slow).rejects.toThrow();
    const next = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'Say yes.' }],
      max_completion_tokens: 8,
    });
    expect(next.choices[0]!.finish_reason).toMatch(/stop|length/);
    const stats = (await (await fetch(new URL('/stats', server.baseUrl))).json()) as {
      requests: Array<{ finishReason: string; completionTokens: number }>;
    };
    const aborted = stats.requests.find((r) => r.finishReason === 'abort');
    expect(aborted).toBeDefined();
    expect(aborted!.completionTokens).toBeLessThan(2000);
  });
}
