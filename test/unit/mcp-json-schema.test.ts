/**
 * The MCP schema check (src/tools/mcp/json-schema.ts) against ajv 8, JSON Schema's reference validator (the copy
 * the MCP SDK brings, with ajv-formats), used here as the oracle only:
 * - on every schema the gate admits, the check's verdict equals ajv's on every instance of the corpus;
 * - each refusal of the gate is beside the evidence that it is needed: on that schema zod's own converter and ajv
 *   disagree (or the converter throws), so checking it would have been unfaithful;
 * - the check returns issues and never changes the value (no defaults filled in, no keys stripped).
 */
import path from 'node:path';
import { z } from 'zod';
import { compileJsonSchema, McpSchemaError, unboundedBacktracking } from '../../src/tools/mcp/json-schema';

type Validate = ((v: unknown) => boolean) & { errors?: unknown };
interface AjvLike {
  compile(schema: unknown): Validate;
}
// The SDK's own ajv 8 (the top-level `ajv` here is eslint's ajv 6).
const sdkDir = path.dirname(require.resolve('@modelcontextprotocol/sdk/package.json'));
/* eslint-disable @typescript-eslint/no-require-imports -- resolved from the SDK's folder, test-only */
const Ajv2020 = (
  require(require.resolve('ajv/dist/2020', { paths: [sdkDir] })) as { default: new (o: object) => AjvLike }
).default;
const Ajv7 = (require(require.resolve('ajv', { paths: [sdkDir] })) as { default: new (o: object) => AjvLike }).default;
const addFormats = (require('ajv-formats') as { default: (a: AjvLike) => void }).default;
/* eslint-enable @typescript-eslint/no-require-imports */

function oracle(schema: unknown): Validate {
  const draft7 =
    typeof schema === 'object' &&
    schema !== null &&
    String((schema as { $schema?: unknown }).$schema).includes('draft-07');
  const ajv = draft7 ? new Ajv7({ strict: false, allErrors: true }) : new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(schema);
}

/** Schemas with instances on both sides of them; the first ones are the registry servers' own shapes. */
const CORPUS: readonly { readonly name: string; readonly schema: object; readonly instances: readonly unknown[] }[] = [
  {
    name: 'filesystem write_file (zod-generated, draft 7)',
    schema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    instances: [
      { path: '/a', content: 'x' },
      { path: '/a' },
      { path: 1, content: 'x' },
      { path: '/a', content: 'x', z: 1 },
      [],
      null,
    ],
  },
  {
    name: 'filesystem read_text_file (optional numbers)',
    schema: {
      type: 'object',
      properties: { path: { type: 'string' }, head: { type: 'number' }, tail: { type: 'number' } },
      required: ['path'],
    },
    instances: [
      { path: 'a' },
      { path: 'a', head: 3 },
      { path: 'a', head: '3' },
      { head: 1 },
      { path: 'a', extra: true },
    ],
  },
  {
    name: 'everything get-structured-content (enum)',
    schema: {
      type: 'object',
      properties: { location: { type: 'string', enum: ['New York', 'Chicago', 'Los Angeles'] } },
      required: ['location'],
    },
    instances: [{ location: 'Chicago' }, { location: 'Paris' }, {}, { location: null }],
  },
  {
    name: 'everything trigger-long-running-operation (defaults are annotations)',
    schema: {
      type: 'object',
      properties: { duration: { type: 'number', default: 10 }, steps: { type: 'number', default: 5 } },
    },
    instances: [{}, { duration: 1 }, { duration: 'x' }],
  },
  {
    name: 'integers, bounds and multiples',
    schema: {
      type: 'object',
      properties: {
        n: { type: 'integer', minimum: 1, maximum: 10 },
        x: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
        m: { type: 'number', multipleOf: 0.5 },
      },
    },
    instances: [
      { n: 1 },
      { n: 0 },
      { n: 10 },
      { n: 11 },
      { n: 2.5 },
      { x: 0 },
      { x: 0.5 },
      { x: 1 },
      { m: 1.5 },
      { m: 1.2 },
    ],
  },
  {
    name: 'strings: lengths (code points), patterns, formats',
    schema: {
      type: 'object',
      properties: {
        s: { type: 'string', minLength: 2, maxLength: 3 },
        p: { type: 'string', pattern: '^[a-z]+-[0-9]{2}$' },
        e: { type: 'string', format: 'email' },
        d: { type: 'string', format: 'date-time' },
        u: { type: 'string', format: 'uuid' },
      },
    },
    instances: [
      { s: 'ab' },
      { s: 'a' },
      { s: 'abcd' },
      { s: '😀😀' },
      { p: 'ab-12' },
      { p: 'ab-1' },
      { e: 'a@b.co' },
      { e: 'nope' },
      { d: '2026-01-02T03:04:05Z' },
      { d: 'yesterday' },
      { u: '0b7e1c62-6d5a-4d6c-9d5e-0c0f2f3a4b5c' },
      { u: 'x' },
    ],
  },
  {
    name: 'arrays: items, counts, uniqueness, tuples',
    schema: {
      type: 'object',
      properties: {
        tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3, uniqueItems: true },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false },
      },
    },
    instances: [
      { tags: ['a'] },
      { tags: [] },
      { tags: ['a', 'a'] },
      { tags: ['a', 1] },
      { pair: ['a', 1] },
      { pair: ['a', 1, 2] },
      { pair: [1, 'a'] },
    ],
  },
  {
    name: 'unions, nullable types, composition',
    schema: {
      type: 'object',
      properties: {
        v: { anyOf: [{ type: 'string' }, { type: 'number' }] },
        o: {
          oneOf: [
            { type: 'string', maxLength: 2 },
            { type: 'string', minLength: 4 },
          ],
        },
        a: { allOf: [{ type: 'string' }, { type: 'string', minLength: 2 }] },
        n: { type: ['string', 'null'] },
      },
    },
    instances: [
      { v: 'x' },
      { v: 1 },
      { v: true },
      { o: 'ab' },
      { o: 'abc' },
      { o: 'abcd' },
      { a: 'x' },
      { a: 'xy' },
      { n: null },
      { n: 3 },
    ],
  },
  {
    name: 'closed and patterned objects, property counts',
    schema: {
      type: 'object',
      properties: { fixed: { type: 'string' } },
      patternProperties: { '^x-': { type: 'number' } },
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 2,
    },
    instances: [{ fixed: 'a' }, { 'x-a': 1 }, { 'x-a': 'no' }, { other: 1 }, {}, { fixed: 'a', 'x-a': 1, 'x-b': 2 }],
  },
  {
    name: 'local references (pydantic-style $defs)',
    schema: {
      type: 'object',
      $defs: { Item: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } },
      properties: { items: { type: 'array', items: { $ref: '#/$defs/Item' } } },
      required: ['items'],
    },
    instances: [{ items: [{ id: 1 }] }, { items: [{}] }, { items: [{ id: 'x' }] }, {}],
  },
];

describe('on every schema the gate admits, the check agrees with ajv', () => {
  for (const { name, schema, instances } of CORPUS) {
    test(name, () => {
      const ours = compileJsonSchema(schema, name);
      const ajv = oracle(schema);
      const verdicts = instances.map((v) => ({ v, ours: ours.check(v).length === 0, ajv: ajv(v) }));
      expect(verdicts.filter((x) => x.ours !== x.ajv)).toEqual([]);
      // Each schema's corpus holds a valid and an invalid instance, so agreement is not agreement on one answer.
      expect(new Set(verdicts.map((x) => x.ajv))).toEqual(new Set([true, false]));
    });
  }
});

/** Schemas the gate refuses, each with an instance on which zod's own converter and ajv part (or it throws). */
const REFUSED: readonly { readonly why: RegExp; readonly schema: object; readonly instance: unknown }[] = [
  // zod's converter applies a type's keywords only under a `type` (found by this test's corpus).
  { why: /minLength without a type/, schema: { allOf: [{ type: 'string' }, { minLength: 2 }] }, instance: 'x' },
  { why: /properties without a type/, schema: { properties: { a: { type: 'string' } } }, instance: { a: 1 } },
  { why: /const of an object/, schema: { const: { a: 1 } }, instance: { a: 1 } },
  { why: /enum of objects/, schema: { enum: [{ a: 1 }, 2] }, instance: { a: 1 } },
  { why: /nullable/, schema: { type: 'string', nullable: true }, instance: null },
  { why: /conditional/, schema: { if: { type: 'string' }, then: { minLength: 2 } }, instance: 'a' },
  { why: /negation/, schema: { not: { type: 'string' } }, instance: 1 },
  { why: /dependent/, schema: { dependentRequired: { a: ['b'] } }, instance: { a: 1 } },
  { why: /unevaluated/, schema: { type: 'object', unevaluatedProperties: false }, instance: { a: 1 } },
  { why: /local references/, schema: { $ref: 'https://example.com/s.json' }, instance: 1 },
];

describe('each refusal is one the converter would have got wrong', () => {
  for (const { why, schema, instance } of REFUSED) {
    test(`refused: ${why.source}`, () => {
      expect(() => compileJsonSchema(schema, 'refused')).toThrow(McpSchemaError);
      expect(() => compileJsonSchema(schema, 'refused')).toThrow(why);
      // The evidence: without the gate, the converter throws or disagrees with ajv on this instance.
      let converterSays: boolean | 'throws';
      try {
        converterSays = z.fromJSONSchema(schema as never).safeParse(instance).success;
      } catch {
        converterSays = 'throws';
      }
      let ajvSays: boolean | 'throws';
      try {
        ajvSays = oracle(schema)(instance);
      } catch {
        ajvSays = 'throws';
      }
      expect(converterSays === 'throws' || converterSays !== ajvSays).toBe(true);
    });
  }
});

test('the check never changes the value: no default filled in, no unknown key stripped', () => {
  const schema = { type: 'object', properties: { a: { type: 'string', default: 'filled' } } };
  const { check, zod } = compileJsonSchema(schema, 'defaults');
  const value = { extra: 1 };
  expect(check(value)).toEqual([]);
  const parsed = zod.safeParse(value);
  expect(parsed.success && parsed.data).toEqual({ extra: 1 });
  // Control: zod's converter alone fills the default in.
  expect(z.fromJSONSchema(schema as never).parse(value)).toEqual({ a: 'filled', extra: 1 });
});

test('the zod form reports the issues of the check, and offers the declared schema as JSON Schema', () => {
  const schema = { type: 'object', properties: { path: { type: 'string', description: 'where' } }, required: ['path'] };
  const { zod } = compileJsonSchema(schema, 'offer');
  const bad = zod.safeParse({ path: 3 });
  expect(bad.success).toBe(false);
  expect(bad.error?.issues[0]?.message).toMatch(/^path: /);
  expect(z.toJSONSchema(zod, { target: 'draft-7', io: 'input', unrepresentable: 'throw' })).toMatchObject(schema);
});

test('patterns that can backtrack without bound are refused; plain ones pass', () => {
  for (const p of ['^(a+)+$', '(a|aa)*b', '(\\w+\\s?)*$', '(x)\\1', '^([a-z]+){2,}$'])
    expect(unboundedBacktracking(p)).not.toBeNull();
  for (const p of ['^[a-z]+-[0-9]{2}$', '^(ab)+$', '^\\d{4}-\\d{2}$', '[(+*)]+', '^(foo|bar)$'])
    expect(unboundedBacktracking(p)).toBeNull();
  expect(() => compileJsonSchema({ type: 'string', pattern: '^(a+)+$' }, 'redos')).toThrow(/backtrack/);
  expect(() => compileJsonSchema({ type: 'object', patternProperties: { '(a*)*': {} } }, 'redos')).toThrow(/backtrack/);
});

test('deep, huge or malformed schemas are refused by name, not walked', () => {
  let deep: object = { type: 'string' };
  for (let i = 0; i < 40; i++) deep = { type: 'array', items: deep };
  expect(() => compileJsonSchema(deep, 'deep')).toThrow(/nested deeper/);
  const wide = {
    type: 'object',
    properties: Object.fromEntries(Array.from({ length: 2_100 }, (_, i) => [`p${i}`, {}])),
  };
  expect(() => compileJsonSchema(wide, 'wide')).toThrow(/more than/);
  expect(() => compileJsonSchema({ type: 'strin' }, 'typo')).toThrow(/JSON types/);
  expect(() => compileJsonSchema({ type: 'object', properties: [] }, 'shape')).toThrow(/map names/);
  expect(() => compileJsonSchema(7 as never, 'shape')).toThrow(/object or a boolean/);
  // Control: a schema of moderate size and depth compiles.
  expect(() =>
    compileJsonSchema({ type: 'array', items: { type: 'array', items: { type: 'string' } } }, 'ok'),
  ).not.toThrow();
});
