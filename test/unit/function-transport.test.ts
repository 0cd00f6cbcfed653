/**
 * The function transport reads what a team's function did as the outcomes every transport gives: a JSON value is
 * an answer; only `NothingSentError` proves nothing was sent; anything else thrown is a possible effect (UNKNOWN).
 * The context carries the key, hash, attempt, fence, signal, deadline, principal and the named secrets (never
 * enumerable, never in a reason).
 */
import { MAX_JSON_DEPTH, TOO_DEEP_KEY } from '../../src/domain/json-depth';
import {
  found,
  implementTool,
  notFound,
  NothingSentError,
  pending,
  type ToolContext,
} from '../../src/downstream/function-tool';
import { FunctionTransport } from '../../src/downstream/function-transport';
import { noteCall, noteTool } from '../helpers/note-tool';

const SECRET = 'sk_live_notes_9f8e7d6c5b4a';

const call = noteCall;
const tool = noteTool;

function transport(
  execute: (args: { text: string }, ctx: ToolContext) => Promise<unknown>,
  lookup?: () => Promise<ReturnType<typeof found>>,
) {
  const impl = implementTool(tool, { execute, ...(lookup ? { lookup } : {}) });
  return new FunctionTransport(impl, { lookup: 'by_key' }, { NOTES_KEY: SECRET });
}

describe('what a function did, as an outcome', () => {
  test('a returned JSON value is the answer, with its id as the receipt', async () => {
    const t = transport(async (args) => ({ id: 'note_1', text: args.text }));
    expect(await t.send(call())).toEqual({
      kind: 'ok',
      status: 200,
      body: { id: 'note_1', text: 'hello' },
      replayed: false,
      receipt: 'note_1',
    });
  });

  test('NothingSentError is a refusal that proves no effect (FAILED); retryable, it is "nothing processed"', async () => {
    const refused = transport(async () => {
      throw new NothingSentError('Notes.TooLong', 'the SDK refused the text before sending');
    });
    expect(await refused.send(call())).toMatchObject({ kind: 'rejected', reason: 'Notes.TooLong' });
    const later = transport(async () => {
      throw new NothingSentError('Notes.RateLimited', 'client-side limit', true);
    });
    expect(await later.send(call())).toMatchObject({ kind: 'unavailable' });
  });

  test('any other throw may have acted: response_lost (UNKNOWN), and a secret it quotes is redacted', async () => {
    const t = transport(async (_a, ctx) => {
      throw new Error(`500 from notes with key ${ctx.secrets['NOTES_KEY']}`);
    });
    const out = await t.send(call());
    expect(out.kind).toBe('response_lost');
    expect(JSON.stringify(out)).not.toContain(SECRET);
    expect(JSON.stringify(out)).toContain('[secret]');
  });

  test('a value that is not JSON is UNKNOWN too: the function acted, its answer cannot be read', async () => {
    expect((await transport(async () => ({ id: 1n })).send(call())).kind).toBe('response_lost');
  });

  test('a cycle nests without end: the answer is the depth marker (settled Result.Invalid), the effect stands', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    const sent = await transport(async () => cyclic).send(call());
    expect(sent).toMatchObject({ kind: 'ok', body: { [TOO_DEEP_KEY]: { limit: MAX_JSON_DEPTH } } });
  });

  test('an attempt past its deadline or cancelled does not run the function (nothing sent)', async () => {
    let ran = 0;
    const t = transport(async () => ({ id: String(++ran) }));
    const aborted = new AbortController();
    aborted.abort();
    expect(await t.send(call({ deadlineAtMs: Date.now() - 1 }))).toMatchObject({ kind: 'unavailable' });
    expect(await t.send(call({ signal: aborted.signal }))).toMatchObject({ kind: 'unavailable' });
    expect(ran).toBe(0);
    // The control: in time, it runs.
    expect(await t.send(call())).toMatchObject({ kind: 'ok' });
    expect(ran).toBe(1);
  });
});

describe('the context a function gets', () => {
  test('key, hash, attempt, fence, signal, deadline, principal, and its secrets, which do not serialize', async () => {
    let seen: ToolContext | undefined;
    const t = transport(async (_a, ctx) => {
      seen = ctx;
      return { id: 'n' };
    });
    const c = call();
    await t.send(c);
    expect(seen).toMatchObject({
      operationKey: 'op_1',
      argumentsHash: c.intent.argumentsHash,
      attempt: 2,
      fence: 7,
      principal: { id: 'user:alice', tenant: 'acme' },
      tenant: 'acme',
      runId: 'run-1',
      logicalCallId: 'lc_1_x',
    });
    expect(seen!.signal).toBeInstanceOf(AbortSignal);
    expect(seen!.deadline.getTime()).toBeLessThanOrEqual(c.deadlineAtMs);
    expect(seen!.secrets['NOTES_KEY']).toBe(SECRET);
    expect(JSON.stringify(seen)).not.toContain(SECRET);
    expect(Object.keys(seen!)).not.toContain('secrets');
  });

  test('the signal aborts at the attempt deadline, so a hanging request is abandoned', async () => {
    const t = transport(
      (_a, ctx) =>
        new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))),
    );
    expect(await t.send(call({ deadlineAtMs: Date.now() + 50 }))).toMatchObject({ kind: 'response_lost' });
  });
});

describe('a function lookup', () => {
  test('found, pending, not found and a throw read as the table reads them', async () => {
    const lookups = [found({ id: 'n1' }), pending(), notFound()];
    const t = new FunctionTransport(
      implementTool(tool, {
        execute: async () => ({ id: 'x' }),
        async lookup() {
          const next = lookups.shift();
          if (next === undefined) throw new Error(`down (${SECRET})`);
          return next;
        },
      }),
      { lookup: 'by_key' },
      { NOTES_KEY: SECRET },
    );
    const q = { tool, intent: call().intent, key: 'op_1', seal: false };
    expect(await t.lookup(q)).toEqual({ kind: 'found', status: 'completed', result: { id: 'n1' }, receipt: 'n1' });
    expect(await t.lookup(q)).toMatchObject({ kind: 'found', status: 'in_progress' });
    expect(await t.lookup(q)).toEqual({ kind: 'not_found', sealed: false }); // a function never seals
    const thrown = await t.lookup(q);
    expect(thrown.kind).toBe('unreachable');
    expect(JSON.stringify(thrown)).not.toContain(SECRET);
  });
});
