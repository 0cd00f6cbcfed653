/**
 * The local model's reply grammar (packages/local-model/src/grammar.ts), read by a GBNF recognizer of its own
 * (test/support/gbnf-matcher.ts): what the grammar admits is what a model can write under it. Sampled texts of the
 * grammar must all be valid against the JSON Schema the model is offered (judged by zod's `fromJSONSchema`,
 * independent of the compiler), valid arguments are admitted, and arguments that break the schema are not. The
 * tools' zod schemas may refine further (a positive amount, a real date): that is the workflow's check, which
 * JSON Schema cannot carry.
 */
import { z } from 'zod';
import type { AnyTool } from '../../src/domain/tool';
import { functionTool } from '../../src/planner/tool-schemas';
import { builtinTools } from '../../src/tools/registry';
import { workflowTools } from '../../examples/ticketing/src/tools/workflow-tools';
import { argumentsGrammar, envelopeGrammar, SchemaError } from '../../packages/local-model/src/grammar';
import { prng } from '../../lab/bench/lib/stats';
import { parseGbnf } from '../support/gbnf-matcher';

const builtin = builtinTools.names().map((n) => builtinTools.get(n)!) as AnyTool[];
const ticketing = workflowTools.names().map((n) => workflowTools.get(n)!) as AnyTool[];
const all = [...builtin, ...ticketing];
const paramsOf = (t: AnyTool) => functionTool(t).function.parameters as Record<string, unknown>;
const tool = (name: string) => all.find((t) => t.name === name)!;
/** The judge: the offered JSON Schema itself. */
const judge = (t: AnyTool) => z.fromJSONSchema(paramsOf(t) as Parameters<typeof z.fromJSONSchema>[0]);

describe('the reply grammar', () => {
  test('every tool schema of the runtime and of examples/ticketing is enforced whole: nothing relaxed', () => {
    const env = envelopeGrammar({
      tools: all.map((t) => ({ name: t.name, parameters: paramsOf(t) })),
      mode: 'auto',
      maxCalls: 4,
    });
    expect(env.relaxed).toEqual([]);
  });

  test.each(all.map((t) => [t.name]))('%s: 300 sampled argument texts are all valid arguments', (name) => {
    const t = tool(name);
    const g = parseGbnf(argumentsGrammar(paramsOf(t)));
    const random = prng(7);
    const schema = judge(t);
    for (let i = 0; i < 300; i++) {
      const text = g.sample(random);
      const parsed = schema.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error(`sample ${i} ${text}: ${parsed.error.message}`);
      expect(g.accepts(text)).toBe(true);
    }
  });

  const cases: Array<[string, unknown, boolean]> = [
    ['wallet_debit', { account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } }, true],
    ['wallet_debit', { account: 'acct_1', amount: { minor: 5, currency: 'EUR' }, memo: 'order 7' }, true],
    ['wallet_debit', { account: 'Aruba', amount: { minor: 1250, currency: 'EUR' } }, false], // pattern
    ['wallet_debit', { account: 'acct_1', amount: { minor: 1250, currency: 'euro' } }, false], // pattern
    ['wallet_debit', { account: 'acct_1', amount: { minor: 12.5, currency: 'EUR' } }, false], // integer
    ['wallet_debit', { account: 'acct_1' }, false], // required
    ['wallet_debit', { account: 'acct_1', amount: { minor: 1, currency: 'EUR' }, note: 'x' }, false], // extra key
    ['wallet_debit', { account: 'acct_1', amount: { minor: 1, currency: 'EUR' }, memo: 'm'.repeat(201) }, false],
    ['inventory_reserve', { sku: 'SKU-1', quantity: 10000 }, true],
    ['inventory_reserve', { sku: 'SKU-1', quantity: 0 }, false], // minimum
    ['inventory_reserve', { sku: 'SKU-1', quantity: 10001 }, false], // maximum
    ['notifications_send_email', { to: 'a@b.co', template: 'receipt', vars: { orderId: '7', n: 'x' } }, true],
    ['notifications_send_email', { to: 'a@b.co', template: 'receipt', vars: {} }, true],
    ['notifications_send_email', { to: 'not-an-email', template: 'receipt', vars: {} }, false],
    ['notifications_send_email', { to: 'a@b.co', template: 'receipt', vars: { '9x': 'y' } }, false], // propertyNames
    ['shipping_schedule', { orderId: 'o1', address: { country: 'FR', postalCode: '75001', line1: '1 rue X' } }, true],
    ['shipping_schedule', { orderId: 'o1', address: { country: 'FR', postalCode: '75001', line1: '   ' } }, false],
    ['shipping_cancel', { shipmentOperationKey: `op_${'a'.repeat(40)}` }, true],
    ['shipping_cancel', { shipmentOperationKey: `op_${'a'.repeat(39)}` }, false],
    ['ticketing_open_ticket', { project: 'ops', title: 'Printer jammed' }, true],
    [
      'ticketing_open_ticket',
      { project: 'ops', title: 'T', labels: ['hw'], due: { at: '2026-12-01T09:00:00+01:00', zone: 'Europe/Paris' } },
      true,
    ],
    [
      'ticketing_open_ticket',
      { project: 'ops', title: 'T', due: { at: '2026-12-01T09:00:00+01:00', zone: 'UTC' } },
      true,
    ],
    ['ticketing_open_ticket', { project: 'ops', title: '' }, false], // minLength
    ['ticketing_open_ticket', { project: 'Ops', title: 'T' }, false], // pattern
    [
      'ticketing_open_ticket',
      { project: 'ops', title: 'T', due: { at: '2026-12-01T09:00:00+01:00', zone: 'paris' } },
      false,
    ],
    ['ticketing_open_ticket', { project: 'ops', title: 'T', labels: Array(11).fill('a') }, false], // maxItems
  ];
  test.each(cases)('%s %j: admitted %s, as the tool schema says', (name, args, valid) => {
    const t = tool(name);
    expect(judge(t).safeParse(args).success).toBe(valid); // the case itself is right
    expect(parseGbnf(argumentsGrammar(paramsOf(t))).accepts(JSON.stringify(args))).toBe(valid);
  });

  test('the reply is compact JSON: calls to offered tools, up to the call limit, or a final answer', () => {
    const tools = builtin.map((t) => ({ name: t.name, parameters: paramsOf(t) }));
    const call = (name: string, args: unknown) => ({ name, arguments: args });
    const debit = call('wallet_debit', { account: 'acct_1', amount: { minor: 1250, currency: 'EUR' } });
    const g = parseGbnf(envelopeGrammar({ tools, mode: 'auto', maxCalls: 2 }).gbnf);
    expect(g.accepts(JSON.stringify({ tool_calls: [debit] }))).toBe(true);
    expect(g.accepts(JSON.stringify({ tool_calls: [debit, debit] }))).toBe(true);
    expect(g.accepts(JSON.stringify({ tool_calls: [], final_answer: 'Charged 12.50 EUR. "Done"\n' }))).toBe(true);
    expect(g.accepts(JSON.stringify({ final_answer: 'no list of calls first' }))).toBe(false);
    expect(g.accepts(JSON.stringify({ tool_calls: [debit, debit, debit] }))).toBe(false); // over the limit
    expect(g.accepts(JSON.stringify({ tool_calls: [] }))).toBe(false);
    expect(g.accepts(JSON.stringify({ tool_calls: [call('wallet_steal', {})] }))).toBe(false); // not offered
    expect(g.accepts(JSON.stringify({ tool_calls: [debit] }, null, 2))).toBe(false); // whitespace is not offered
    const required = parseGbnf(envelopeGrammar({ tools, mode: 'required', maxCalls: 1 }).gbnf);
    expect(required.accepts(JSON.stringify({ tool_calls: [debit] }))).toBe(true);
    expect(required.accepts(JSON.stringify({ tool_calls: [], final_answer: 'no' }))).toBe(false);
  });

  test('optional properties: any subset of them, in the schema order, however many there are', () => {
    const properties = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((k) => [k, { type: 'integer' }]));
    const g = parseGbnf(argumentsGrammar({ type: 'object', properties, additionalProperties: false }));
    expect(g.accepts('{}')).toBe(true);
    expect(g.accepts('{"b":1,"e":2}')).toBe(true);
    expect(g.accepts('{"a":1,"b":2,"c":3,"d":4,"e":5}')).toBe(true);
    expect(g.accepts('{"b":1,}')).toBe(false);
    expect(g.accepts('{,"b":1}')).toBe(false);
  });

  test('a recursive $ref becomes a recursive rule; enum and const are literal JSON', () => {
    const schema = {
      type: 'object',
      properties: { tree: { $ref: '#/definitions/Node' }, k: { const: { x: [1] } }, c: { enum: ['EUR', 2, null] } },
      required: ['tree', 'k', 'c'],
      additionalProperties: false,
      definitions: {
        Node: {
          type: 'object',
          properties: { kids: { type: 'array', items: { $ref: '#/definitions/Node' } } },
          required: ['kids'],
          additionalProperties: false,
        },
      },
    };
    const relaxed = new Set<string>();
    const g = parseGbnf(argumentsGrammar(schema, relaxed));
    expect(g.accepts('{"tree":{"kids":[{"kids":[]},{"kids":[{"kids":[]}]}]},"k":{"x":[1]},"c":null}')).toBe(true);
    expect(g.accepts('{"tree":{"kids":[{}]},"k":{"x":[1]},"c":"EUR"}')).toBe(false);
    expect(g.accepts('{"tree":{"kids":[]},"k":{"x":[2]},"c":2}')).toBe(false);
    expect([...relaxed]).toEqual([]);
  });

  test('what it cannot enforce is named, and the rest still is', () => {
    const relaxed = new Set<string>();
    const g = parseGbnf(
      argumentsGrammar(
        {
          type: 'object',
          properties: {
            w: { type: 'string', pattern: '^(?=x)\\w+$' },
            u: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 9 }, uniqueItems: true },
          },
          required: ['w', 'u'],
          additionalProperties: false,
        },
        relaxed,
      ),
    );
    expect([...relaxed].sort()).toEqual(['pattern (lookaround)', 'uniqueItems']);
    expect(g.accepts('{"w":"any text","u":[1,1]}')).toBe(true);
    expect(g.accepts('{"w":"x","u":[10]}')).toBe(false); // maximum still enforced
  });

  test.each([
    ['not an object schema', { type: 'string' }],
    ['a dangling $ref', { type: 'object', properties: { a: { $ref: '#/definitions/Nope' } } }],
    ['an unknown type', { type: 'object', properties: { a: { type: 'decimal' } } }],
    ['an empty integer range', { type: 'object', properties: { a: { type: 'integer', minimum: 3, maximum: 2 } } }],
  ])('%s: a SchemaError', (_what, schema) => {
    expect(() => argumentsGrammar(schema)).toThrow(SchemaError);
  });
});

describe('patterns within a length', () => {
  const stringGrammar = (pattern: string, maxLength?: number, minLength?: number) => {
    const relaxed = new Set<string>();
    const g = parseGbnf(
      argumentsGrammar(
        {
          type: 'object',
          properties: {
            s: { type: 'string', pattern, ...(maxLength ? { maxLength } : {}), ...(minLength ? { minLength } : {}) },
          },
          required: ['s'],
          additionalProperties: false,
        },
        relaxed,
      ),
    );
    return { accepts: (v: string) => g.accepts(JSON.stringify({ s: v })), relaxed: [...relaxed] };
  };

  test('an unbounded repeat is capped to fit maxLength: nothing longer, the pattern still holds', () => {
    const g = stringGrammar('^[a-z]+@[a-z]+$', 9);
    expect(g.accepts('abcd@efgh')).toBe(true); // the budget is shared: at most 4 each side
    expect(g.accepts('abc@defgh')).toBe(false); // valid, but outside the subset the grammar offers
    expect(g.accepts('abcd@efghi')).toBe(false); // 10 characters
    expect(g.accepts('abc@DEF')).toBe(false);
    expect(g.relaxed).toEqual([]);
  });

  test('an unanchored pattern is matched from the start; the rest fills the lengths', () => {
    const g = stringGrammar('\\S', 5, 2);
    expect(g.accepts('a b')).toBe(true);
    expect(g.accepts('a')).toBe(false); // minLength
    expect(g.accepts('abcdef')).toBe(false); // maxLength
    expect(g.accepts('  a')).toBe(false); // valid, but outside the subset the grammar offers
  });

  test('a repeat inside a repeat that cannot be shared out is left to the client, and named', () => {
    expect(stringGrammar('^(a+)+$', 4).relaxed).toEqual(['maxLength (beside a pattern)']);
  });
});
