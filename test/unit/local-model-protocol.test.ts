/**
 * The local model server's protocol, without the model (packages/local-model/src): request checking and its
 * typed 400s, tool_call_id pairing, the grammar built from tool schemas, the conversation the model reads, and
 * the reader that turns a generated reply into content and tool calls (streamed or not).
 */
import { ApiError } from '../../packages/local-model/src/errors';
import { EnvelopeReader } from '../../packages/local-model/src/envelope';
import { AFTER_RESULTS, historyOf, signatureOf } from '../../packages/local-model/src/prompt';
import { parseChatRequest } from '../../packages/local-model/src/request';
import { isLoopback, parseServerFlags, SetupError, threadCount } from '../../packages/local-model/src/settings';
import { chatCompletionTools } from '../../src/planner/tool-schemas';

const tool = (name: string, parameters: Record<string, unknown> = { type: 'object', properties: {} }) => ({
  type: 'function',
  function: { name, description: `${name} it`, parameters },
});
const base = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

function refusal(body: unknown): ApiError {
  try {
    parseChatRequest(body);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('the request was accepted');
}

describe('request checking', () => {
  test('a plain request is accepted and normalised', () => {
    const r = parseChatRequest({
      ...base,
      messages: [
        {
          role: 'developer',
          content: [
            { type: 'text', text: 'be ' },
            { type: 'text', text: 'brief' },
          ],
        },
        { role: 'user', content: 'hi' },
      ],
      tools: [tool('a')],
      max_completion_tokens: 40,
      stop: 'END',
    });
    expect(r.messages[0]).toEqual({ role: 'system', text: 'be brief' });
    expect(r.toolChoice).toEqual({ kind: 'auto' });
    expect(r.parallelToolCalls).toBe(true);
    expect(r.maxTokens).toBe(40);
    expect(r.stop).toEqual(['END']);
  });

  test.each([
    ['no model', { messages: base.messages }, 'model', 'missing_required_parameter'],
    ['empty messages', { ...base, messages: [] }, 'messages', 'invalid_value'],
    ['unknown role', { ...base, messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role', 'invalid_value'],
    ['temperature above 2', { ...base, temperature: 3 }, 'temperature', 'invalid_value'],
    ['n above 1', { ...base, n: 2 }, 'n', 'unsupported_parameter'],
    ['logprobs', { ...base, logprobs: true }, 'logprobs', 'unsupported_parameter'],
    [
      'json_schema format',
      { ...base, response_format: { type: 'json_schema' } },
      'response_format',
      'unsupported_parameter',
    ],
    ['legacy functions', { ...base, functions: [] }, 'functions', 'unsupported_parameter'],
    [
      'an image part',
      { ...base, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] },
      'messages[0].content[0]',
      'unsupported_content',
    ],
    ['a bad tool name', { ...base, tools: [tool('no spaces allowed')] }, 'tools[0].function.name', 'invalid_value'],
    ['a tool declared twice', { ...base, tools: [tool('a'), tool('a')] }, 'tools', 'duplicate_tool'],
    [
      'tool_choice naming an absent tool',
      { ...base, tools: [tool('a')], tool_choice: { type: 'function', function: { name: 'b' } } },
      'tool_choice',
      'invalid_value',
    ],
  ])('%s: a typed 400', (_what, body, param, code) => {
    const e = refusal(body);
    expect(e.status).toBe(400);
    expect(e.body().error).toMatchObject({ type: 'invalid_request_error', param, code });
  });

  test.each([null, [], 'text', 42])('a body that is not an object (%p): a typed 400', (body) => {
    expect(refusal(body).body().error.code).toBe('invalid_body');
  });
});

describe('tool_call_id pairing', () => {
  const call = (id: string, name = 'a') => ({ id, type: 'function', function: { name, arguments: '{}' } });
  const assistant = { role: 'assistant', content: null, tool_calls: [call('c1'), call('c2', 'b')] };

  test('tool results are matched to their calls by id, in any order', () => {
    const r = parseChatRequest({
      ...base,
      tools: [tool('a'), tool('b')],
      messages: [
        { role: 'user', content: 'go' },
        assistant,
        { role: 'tool', tool_call_id: 'c2', content: 'B done' },
        { role: 'tool', tool_call_id: 'c1', content: 'A done' },
      ],
    });
    const history = historyOf(r);
    const results = history.at(-1)!;
    // The results are given in the order of the calls, each with its own call's result.
    expect(results).toEqual({
      type: 'user',
      text: `The application ran your calls:\n1. a {} -> A done\n2. b {} -> B done\n${AFTER_RESULTS}`,
    });
    expect(history.at(-2)).toEqual({
      type: 'model',
      response: ['{"tool_calls":[{"name":"a","arguments":{}},{"name":"b","arguments":{}}]}'],
    });
  });

  test.each([
    [
      'an unanswered call',
      [
        { role: 'user', content: 'go' },
        assistant,
        { role: 'tool', tool_call_id: 'c1', content: 'x' },
        { role: 'user', content: 'and?' },
      ],
      'messages[1].tool_calls',
      'tool_call_unanswered',
    ],
    [
      'a result for no call',
      [
        { role: 'user', content: 'go' },
        { role: 'tool', tool_call_id: 'c9', content: 'x' },
      ],
      'messages[1].tool_call_id',
      'tool_call_id_unknown',
    ],
    [
      'a result for a call of an older turn',
      [
        { role: 'user', content: 'go' },
        assistant,
        { role: 'tool', tool_call_id: 'c1', content: 'x' },
        { role: 'tool', tool_call_id: 'c2', content: 'y' },
        { role: 'user', content: 'again' },
        { role: 'tool', tool_call_id: 'c1', content: 'x' },
      ],
      'messages[5].tool_call_id',
      'tool_call_id_unknown',
    ],
    [
      'two results for one call',
      [
        { role: 'user', content: 'go' },
        assistant,
        { role: 'tool', tool_call_id: 'c1', content: 'x' },
        { role: 'tool', tool_call_id: 'c1', content: 'y' },
      ],
      'messages[3].tool_call_id',
      'tool_call_id_repeated',
    ],
    [
      'two calls with one id',
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', tool_calls: [call('c1'), call('c1')] },
      ],
      'messages[1].tool_calls',
      'tool_call_id_repeated',
    ],
  ])('%s: a typed 400', (_what, messages, param, code) => {
    expect(refusal({ ...base, tools: [tool('a'), tool('b')], messages }).body().error).toMatchObject({ param, code });
  });
});

describe('the prompt', () => {
  test('a signature is shorter than the schema it describes', () => {
    const debit = chatCompletionTools().find((t) => t.function.name === 'wallet_debit')!.function.parameters;
    const sig = signatureOf(debit);
    expect(sig).toContain('memo?: string');
    expect(sig.length).toBeLessThan(JSON.stringify(debit).length / 1.5);
  });
});

describe('reading a generated reply', () => {
  const feed = (text: string, size: number) => {
    const r = new EnvelopeReader();
    const events = [];
    for (let i = 0; i < text.length; i += size) events.push(...r.push(text.slice(i, i + size)));
    return { events, result: r.finish() };
  };
  const calls =
    '{ "tool_calls": [ {"name": "a", "arguments": {"x": "}]\\"", "n": [1, {"y": 2}]}}, {"name":"b","arguments":{}} ] }';

  test.each([1, 3, 7, 1000])('tool calls come out whole, whatever the chunk size (%i)', (size) => {
    const { events, result } = feed(calls, size);
    const expected = [
      { name: 'a', arguments: '{"x":"}]\\"","n":[1,{"y":2}]}' },
      { name: 'b', arguments: '{}' },
    ];
    expect(events).toEqual(expected.map((call, index) => ({ kind: 'call', index, call })));
    expect(result).toEqual({ content: null, calls: expected });
  });

  test.each([1, 2, 5])('a final answer streams as decoded text (chunk size %i)', (size) => {
    const { events, result } = feed('{"final_answer": "Done: 12,50 \\u20ac \\"ok\\"\\n"}', size);
    const text = events.map((e) => (e.kind === 'content' ? e.text : '')).join('');
    expect(text).toBe('Done: 12,50 € "ok"\n');
    expect(result).toEqual({ content: text, calls: [] });
  });

  test('a reply cut off inside a call keeps the complete calls and the cut one as it was', () => {
    const { result } = feed(
      '{"tool_calls":[{"name":"a","arguments":{}},{"name":"wallet_debit","arguments":{"account":"ac',
      4,
    );
    expect(result.calls).toEqual([{ name: 'a', arguments: '{}' }]);
    expect(result.partialCall).toEqual({ name: 'wallet_debit', arguments: '{"account":"ac' });
  });

  test.each([1, 4])('an answer after an empty list of calls is the content (chunk size %i)', (size) => {
    const { events, result } = feed('{"tool_calls":[],"final_answer":"Charged \\"acct_1\\"."}', size);
    expect(events.map((e) => (e.kind === 'content' ? e.text : '')).join('')).toBe('Charged "acct_1".');
    expect(result).toEqual({ content: 'Charged "acct_1".', calls: [] });
  });

  test('text not in the reply format is the content', () => {
    expect(feed('plain words', 3).result).toEqual({ content: 'plain words', calls: [] });
  });
});

describe('server settings', () => {
  test('only loopback addresses are served', () => {
    expect(['127.0.0.1', 'localhost', '::1', '127.1.2.3'].every(isLoopback)).toBe(true);
    expect(['0.0.0.0', '192.168.1.4', '::', 'example.com'].some(isLoopback)).toBe(false);
  });

  test('threads: the option, else the variable, else the cores; nonsense refused', () => {
    expect(threadCount(3, {})).toBe(3);
    expect(threadCount(undefined, { LEDGERLOOP_LOCAL_MODEL_THREADS: '1' })).toBe(1);
    expect(threadCount(undefined, {})).toBeGreaterThanOrEqual(1);
    expect(() => threadCount(undefined, { LEDGERLOOP_LOCAL_MODEL_THREADS: 'many' })).toThrow(/threads/);
    expect(() => threadCount(0, {})).toThrow(/threads/);
  });
});

describe("the server process's flags (parseArgs, strict)", () => {
  test('each flag, as `--flag value` or `--flag=value`, parses to its option', () => {
    expect(parseServerFlags([])).toEqual({});
    expect(
      parseServerFlags([
        '--host',
        '127.0.0.1',
        '--port=8321',
        '--threads',
        '1',
        '--context-size',
        '2048',
        '--sequences=2',
      ]),
    ).toEqual({ host: '127.0.0.1', port: 8321, threads: 1, contextSize: 2048, sequences: 2 });
  });

  test.each([
    [['--prot', '1'], /Unknown option '--prot'/],
    [['--port'], /argument missing/],
    [['--port', 'eighty'], /--port takes a number, not eighty/],
    [['--threads='], /--threads takes a number/],
    [['stray'], /Unexpected argument 'stray'/],
  ])('%j is refused with a SetupError (exit 2)', (argv, message) => {
    expect(() => parseServerFlags(argv)).toThrow(SetupError);
    expect(() => parseServerFlags(argv)).toThrow(message);
  });
});
