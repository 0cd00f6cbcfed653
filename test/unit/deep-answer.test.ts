/**
 * Issue #39, the gap left after hole 3: a downstream's answer nested deeper than the payload converter can encode
 * (about 4,000 levels on the main thread) failed the dispatch activity AFTER the effect, so the call went through
 * resends and reconciliation and could end UNKNOWN. Every answer now leaves a transport through one depth guard,
 * which replaces a value nested deeper than `MAX_JSON_DEPTH` by a shallow marker before anything serializes it; the
 * workflow settles the marker as SUCCEEDED with `Result.Invalid`. Each refusal here has its control: a normal
 * answer passes untouched.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createDispatchActivities } from '../../activities/dispatch.activities';
import type { DispatchResponse, ReconcileResponse } from '../../src/domain/activity-contracts';
import { isTooDeepMarker, MAX_JSON_DEPTH } from '../../src/domain/json-depth';
import type { DownstreamClient } from '../../src/downstream/client';
import { implementTool } from '../../src/downstream/function-tool';
import { FunctionTransport } from '../../src/downstream/function-transport';
import { answerBody } from '../../src/downstream/mcp/result';
import { walletDebitRequest } from '../helpers/dispatch-request';
import { noteCall, noteTool } from '../helpers/note-tool';

const DEEP = 10_000;

/** `depth` objects nested in one another, the innermost a leaf. */
function nested(depth: number): unknown {
  let v: unknown = { leaf: true };
  for (let i = 1; i < depth; i++) v = { n: v };
  return v;
}

/** A wallet on Ledgerloop's HTTP contract that commits once per key and answers with `result`. */
function wallet(result: unknown) {
  const effects = new Set<string>();
  const client = {
    async send(_path: string, _body: unknown, options: { key: string }) {
      const replayed = effects.has(options.key);
      effects.add(options.key);
      return { kind: 'ok', status: 201, body: result, replayed };
    },
    async lookup(key: string) {
      return effects.has(key)
        ? { kind: 'found', record: { operationKey: key, status: 'completed', receipt: 'rcpt_1', result } }
        : { kind: 'not_found', sealed: false };
    },
    async contract() {
      return { idempotencyRetentionMs: 86_400_000 };
    },
  } as unknown as DownstreamClient;
  return { client, effects };
}

async function dispatchOnce(result: unknown) {
  const w = wallet(result);
  const { dispatchTool } = createDispatchActivities({ services: { wallet: w.client }, workerIdentity: 'unit' });
  const env = new MockActivityEnvironment({ attempt: 1 });
  // What Temporal does with the activity's answer: encode it with the payload converter, which recurses.
  const out = await (env.run(dispatchTool, walletDebitRequest(1)) as Promise<DispatchResponse>).then(
    (r) => ({ ok: true as const, r, encoded: encodes(r) }),
    (e: unknown) => ({ ok: false as const, e }),
  );
  return { out, effects: w.effects };
}

function encodes(value: unknown): true | string {
  try {
    defaultPayloadConverter.toPayload(value);
    return true;
  } catch (err) {
    return String(err);
  }
}

describe('an answer nested too deep leaves the activity as a shallow marker, after its one effect', () => {
  test('the HTTP contract answering 10,000 levels deep: succeeded, the body a marker the converter encodes', async () => {
    const { out, effects } = await dispatchOnce(nested(DEEP));
    expect(effects.size).toBe(1);
    expect(out).toMatchObject({ ok: true, encoded: true, r: { outcome: 'succeeded' } });
    const body = out.ok ? out.r.body : undefined;
    expect(isTooDeepMarker(body)).toBe(true);
    expect(body).toEqual({ 'ledgerloop:tooDeep': { limit: MAX_JSON_DEPTH, at: 'n.n.n.n' } });
  });

  test('control: a normal answer passes untouched', async () => {
    const { out, effects } = await dispatchOnce({ receipt: 'rcpt_1', deep: nested(MAX_JSON_DEPTH - 1) });
    expect(effects.size).toBe(1);
    expect(out).toMatchObject({ ok: true, encoded: true, r: { outcome: 'succeeded', receipt: 'rcpt_1' } });
    expect(out.ok && out.r.body).toEqual({ receipt: 'rcpt_1', deep: nested(MAX_JSON_DEPTH - 1) });
  });

  test('a lookup finding a 10,000-deep result reconciles to the marker, never a retryable failure', async () => {
    const w = wallet(nested(DEEP));
    const { dispatchTool, reconcileCall } = createDispatchActivities({
      services: { wallet: w.client },
      workerIdentity: 'unit',
    });
    const req = walletDebitRequest(1);
    await new MockActivityEnvironment({ attempt: 1 }).run(dispatchTool, req);
    const found: ReconcileResponse = await new MockActivityEnvironment({ attempt: 1 }).run(reconcileCall, {
      intent: req.intent,
      service: 'wallet',
      seal: false,
    });
    expect(encodes(found)).toBe(true);
    expect(found).toMatchObject({ kind: 'found', status: 'completed', receipt: 'rcpt_1' });
    expect(found.kind === 'found' && isTooDeepMarker(found.result)).toBe(true);
    expect(w.effects.size).toBe(1);
  });
});

describe('a function tool returning 10,000 levels deep acted once: its answer is the marker, not response_lost', () => {
  const effects: string[] = [];
  const impl = (returned: () => unknown) =>
    new FunctionTransport(
      implementTool(noteTool, {
        execute: async (_a, ctx) => {
          effects.push(ctx.operationKey);
          return returned();
        },
        lookup: async () => ({ kind: 'found', status: 'completed', result: returned() }),
      }),
      { lookup: 'by_key' },
      {},
    );

  beforeEach(() => effects.splice(0));

  test('send: ok with the marker, one effect', async () => {
    const sent = await impl(() => nested(DEEP)).send(noteCall());
    expect(sent).toMatchObject({ kind: 'ok', status: 200 });
    expect(sent.kind === 'ok' && isTooDeepMarker(sent.body)).toBe(true);
    expect(effects).toEqual(['op_1']);
  });

  test('lookup: the record found is the marker, not unreachable', async () => {
    const found = await impl(() => nested(DEEP)).lookup({ ...noteCall(), seal: false });
    expect(found).toMatchObject({ kind: 'found', status: 'completed' });
    expect(found.kind === 'found' && isTooDeepMarker(found.result)).toBe(true);
  });

  test('control: a normal value is the answer as it was returned', async () => {
    const sent = await impl(() => ({ id: 'note_1' })).send(noteCall());
    expect(sent).toEqual({ kind: 'ok', status: 200, body: { id: 'note_1' }, replayed: false, receipt: 'note_1' });
  });
});

describe("an MCP tool's structured content 10,000 levels deep", () => {
  test('is carried as the marker, measured without overflowing', () => {
    const body = answerBody({ content: [], structuredContent: nested(DEEP) as Record<string, unknown> }, 100_000);
    expect('structured' in body && isTooDeepMarker(body.structured)).toBe(true);
  });

  test('control: shallow structured content is carried as it came', () => {
    const body = answerBody({ content: [], structuredContent: { id: 'x' } }, 100_000);
    expect(body).toMatchObject({ structured: { id: 'x' } });
  });
});
