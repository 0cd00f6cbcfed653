/**
 * Bad declarations refuse at the worker's start, typed (`Tools.DeclarationInvalid`), never at a lost response:
 * each refusal beside the control that the same declaration, made whole, is accepted.
 */
import path from 'node:path';
import { z } from 'zod';
import { declarationProblems, ToolDeclarationError } from '../../src/domain/tool-check';
import { defineTool, type AnyTool } from '../../src/domain/tool';
import type { ToolTransport } from '../../src/domain/transport';
import { implementTool, found } from '../../src/downstream/function-tool';
import type { Pool } from 'pg';
import { PgOutbox } from '../../src/downstream/outbox/pg-outbox';
import { wiringProblems } from '../../src/downstream/transports';
import { LedgerloopPlugin } from '../../host/worker/plugin';
import { generateSigningKey } from '../../src/capability/capability-keys';
import { labScriptedModel } from '../../lab/scenarios';
import { FakeLedgerApi, FakeMailApi } from '../support/transports/fake-apis';
import { ledgerAndMailFunctions } from '../support/transports/functions';
import { ledgerPost, paymentsCharge, paymentsRefund } from '../support/transports/tools';

function tool(transport: ToolTransport, idempotency: AnyTool['idempotency']): AnyTool {
  return defineTool({
    name: 'probe_tool',
    version: 1,
    description: 'probe',
    args: z.object({ x: z.string() }).strict(),
    result: z.object({ id: z.string() }),
    maxArgumentBytes: 100,
    maxResultBytes: 100,
    service: 'probe',
    transport,
    effectScope: 'probe.do',
    idempotency,
    canonicalize: (a, ctx) => ({ tenant: ctx.tenant, x: a.x }),
    authorization: (_a, ctx) => ({ action: 'probe.do', resource: `${ctx.tenant}/p/1`, resourceTenant: ctx.tenant }),
    compensation: { kind: 'none' },
    summary: () => 'probe',
    promote: (r) => ({ id: r.id }),
  });
}

const http = (over: Partial<Extract<ToolTransport, { kind: 'http' }>> = {}): ToolTransport => ({
  kind: 'http',
  method: 'POST',
  path: '/v1/things',
  ...over,
});

describe('a declaration the recovery table could only follow by guessing is refused', () => {
  test('an HTTP tool declared idempotent_by_key with no retention', () => {
    expect(declarationProblems(tool(http(), 'idempotent_by_key'))).toEqual([
      expect.stringMatching(/idempotent_by_key but declares no key retention/),
    ]);
    expect(declarationProblems(tool(http({ keyRetentionMs: 86_400_000 }), 'idempotent_by_key'))).toEqual([]);
  });

  test('a reconcilable_by_lookup tool with no lookup', () => {
    expect(declarationProblems(tool({ kind: 'function' }, 'reconcilable_by_lookup'))).toEqual([
      expect.stringMatching(/reconcilable_by_lookup but declares no lookup/),
    ]);
    expect(
      declarationProblems(tool({ kind: 'function', promises: { lookup: 'by_key' } }, 'reconcilable_by_lookup')),
    ).toEqual([]);
  });

  test('a function that claims to seal, a retention or window that is not positive, an HTTP path without /', () => {
    expect(
      declarationProblems(tool({ kind: 'function', promises: { seals: true, lookup: 'by_key' } }, 'none')),
    ).toHaveLength(1);
    expect(declarationProblems(tool({ kind: 'function', promises: { keyRetentionMs: 0 } }, 'none'))).toHaveLength(1);
    expect(declarationProblems(tool(http({ maxInFlightMs: -5 }), 'none'))).toHaveLength(1);
    expect(declarationProblems(tool(http({ path: 'v1/things' }), 'none'))).toHaveLength(1);
    expect(declarationProblems(tool({ kind: 'function' }, 'none'))).toEqual([]); // the control
  });
});

describe('what only the worker knows: implementations, secrets and base URLs', () => {
  const ledger = new FakeLedgerApi('k');
  const functions = ledgerAndMailFunctions(ledger, new FakeMailApi());

  test('a secret named but missing refuses, naming the secret and never a value', () => {
    const refund = implementTool(paymentsRefund, {
      execute: async () => ({ id: 're_1', status: 'succeeded' }),
      lookup: async () => found(null),
    });
    const problems = wiringProblems([paymentsRefund], { services: {}, functions: [refund], secrets: {} });
    expect(problems).toEqual([expect.stringMatching(/the secret PAYMENTS_API_KEY is named but missing/)]);
    expect(
      wiringProblems([paymentsRefund], { services: {}, functions: [refund], secrets: { PAYMENTS_API_KEY: 'sk' } }),
    ).toEqual([]);
  });

  test('a function tool without its implementation, an implementation of no tool, a declared lookup it lacks', () => {
    const [post] = functions;
    const noLookup = { ...post!, lookup: undefined };
    expect(
      wiringProblems([paymentsRefund], { services: {}, functions: [], secrets: { PAYMENTS_API_KEY: 'x' } }),
    ).toEqual([expect.stringMatching(/implementation the worker lacks/)]);
    expect(wiringProblems([], { services: {}, functions: [post!] })).toEqual([
      expect.stringMatching(/implementation of no function tool/),
    ]);
    expect(
      wiringProblems([ledgerPost], { services: {}, functions: [noLookup], secrets: { LEDGER_API_KEY: 'x' } }),
    ).toEqual([expect.stringMatching(/declares a lookup, but its implementation has none/)]);
  });

  test('an HTTP API without a base URL', () => {
    const secrets = { PAYMENTS_API_KEY: 'sk' };
    expect(wiringProblems([paymentsCharge], { services: {}, secrets })).toEqual([expect.stringMatching(/base URL/)]);
    expect(
      wiringProblems([paymentsCharge], { services: {}, baseUrls: { payments: 'http://127.0.0.1:9' }, secrets }),
    ).toEqual([]);
  });
});

describe('an outbox the worker cannot serve', () => {
  // No query runs: a pool-shaped object is all the wiring check reads.
  const outbox = new PgOutbox({ pool: { connect: () => Promise.reject(new Error('unused')) } as unknown as Pool });
  const payments = { services: {}, baseUrls: { payments: 'http://127.0.0.1:9' } };

  test('an outbox without a pool refuses, typed; one with a pool is built', () => {
    expect(() => new PgOutbox({} as never)).toThrow(ToolDeclarationError);
    expect(() => new PgOutbox({} as never)).toThrow(/no pg Pool is given/);
    expect(outbox.table).toBe('ledgerloop_outbox');
  });

  test('a table name that is not a plain identifier refuses (it is written into SQL)', () => {
    const pool = { connect: () => undefined } as unknown as Pool;
    expect(() => new PgOutbox({ pool, table: 'x; DROP TABLE y' })).toThrow(ToolDeclarationError);
    expect(() => new PgOutbox({ pool, table: 'x; DROP TABLE y' })).toThrow(/is not a plain identifier/);
    expect(() => new PgOutbox({ pool, table: 'team_outbox' })).not.toThrow();
  });

  test('an outbox naming a tool the worker does not serve, or one that takes a fence already', () => {
    const secrets = { PAYMENTS_API_KEY: 'sk' };
    expect(
      wiringProblems([paymentsCharge], { ...payments, secrets, outbox: { outbox, tools: ['payments_chrge'] } }),
    ).toEqual([expect.stringMatching(/payments_chrge is not a tool this worker serves/)]);
    const contract = tool({ kind: 'ledgerloop', route: '/v1/probe' }, 'idempotent_by_key');
    expect(wiringProblems([contract], { services: {}, outbox: { outbox, tools: ['probe_tool'] } })).toEqual([
      expect.stringMatching(/on the ledgerloop transport/),
    ]);
    expect(
      wiringProblems([paymentsCharge], { ...payments, secrets, outbox: { outbox, tools: ['payments_charge'] } }),
    ).toEqual([]);
  });

  test("the outboxed tool's secret named but missing still refuses", () => {
    const wiring = { ...payments, outbox: { outbox, tools: ['payments_charge'] } };
    expect(wiringProblems([paymentsCharge], { ...wiring, secrets: {} })).toEqual([
      expect.stringMatching(/secret PAYMENTS_API_KEY is named but missing/),
    ]);
    expect(wiringProblems([paymentsCharge], { ...wiring, secrets: { PAYMENTS_API_KEY: 'sk' } })).toEqual([]);
  });
});

describe('the worker refuses to start, before it connects', () => {
  const tools = path.resolve(__dirname, '../support/transports/workflow-tools.ts');
  const base = {
    tools,
    services: { payments: 'http://127.0.0.1:9' },
    policy: { version: 'v1', rules: [] },
    model: labScriptedModel(),
    capabilityKey: generateSigningKey(),
    identityIssuers: { current: () => [] },
  };
  const secrets = { LEDGER_API_KEY: 'sk_ledger', PAYMENTS_API_KEY: 'sk_payments_secret_value' };
  const all = () => [
    ...ledgerAndMailFunctions(new FakeLedgerApi('k'), new FakeMailApi()),
    implementTool(paymentsRefund, {
      execute: async () => ({ id: 're', status: 'succeeded' }),
      lookup: async () => found(null),
    }),
  ];

  test('a missing secret is Tools.DeclarationInvalid, and the error does not carry any secret value', () => {
    let thrown: unknown;
    try {
      new LedgerloopPlugin({ ...base, functions: all(), secrets: { LEDGER_API_KEY: 'sk_ledger' } });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ToolDeclarationError);
    expect(thrown).toMatchObject({ name: 'Tools.DeclarationInvalid' });
    expect((thrown as Error).message).toMatch(/PAYMENTS_API_KEY is named but missing/);
    expect((thrown as Error).message).not.toContain('sk_ledger');
  });

  test('the control: given every implementation, secret and base URL, the worker is built', () => {
    expect(() => new LedgerloopPlugin({ ...base, functions: all(), secrets })).not.toThrow();
  });
});
