/**
 * The grammar a reply is generated under: one JSON object, either `{"tool_calls":[{"name":…,"arguments":…}]}`
 * or `{"final_answer":"…"}`, where each call's `arguments` follow that tool's JSON Schema. The schema built here
 * is in the subset node-llama-cpp turns into a GBNF grammar (`llama.createGrammarForJsonSchema`); this module
 * only builds it and has no dependency on node-llama-cpp.
 *
 * What the grammar enforces of a tool's JSON Schema: types (object, array, string, number, integer, boolean,
 * null), `properties` with `required` (up to three optional properties, as alternatives), `additionalProperties`
 * given as a schema (a map), `enum`, `const`, `oneOf`/`anyOf`, `items`, `minItems`/`maxItems`, string
 * `minLength`/`maxLength` and the formats `date`, `time`, `date-time`; `$ref` into `definitions`/`$defs` is inlined.
 * What it does NOT enforce is listed per request in `relaxed` (e.g. `pattern`, `minimum`, `maximum`): the model
 * may produce a value the schema refuses, and the client validates the arguments as it would anyone's.
 */

/** The part of node-llama-cpp's `GbnfJsonSchema` this module produces. */
export type GrammarSchema =
  | { readonly type: GrammarScalar | readonly GrammarScalar[] }
  | { readonly type: 'string'; readonly minLength?: number; readonly maxLength?: number }
  | { readonly type: 'string'; readonly format: 'date' | 'time' | 'date-time' }
  | { readonly const: string | number | boolean | null }
  | { readonly enum: readonly (string | number | boolean | null)[] }
  | { readonly oneOf: readonly GrammarSchema[] }
  | {
      readonly type: 'object';
      readonly properties?: Readonly<Record<string, GrammarSchema>>;
      readonly additionalProperties?: boolean | GrammarSchema;
    }
  | {
      readonly type: 'array';
      readonly items?: GrammarSchema;
      readonly prefixItems?: readonly GrammarSchema[];
      readonly minItems?: number;
      readonly maxItems?: number;
    };

export type GrammarScalar = 'string' | 'number' | 'integer' | 'boolean' | 'null';

const SCALARS: readonly string[] = ['string', 'number', 'integer', 'boolean', 'null'];
const FORMATS: readonly string[] = ['date', 'time', 'date-time'];
/** Optional properties up to this count become alternatives (2^n objects); above it, see `objectVariants`. */
export const MAX_OPTIONAL_ALTERNATIVES = 3;
const MAX_REF_DEPTH = 8;
const MAX_DEPTH = 32;

/** Any JSON value (node-llama-cpp has no "any" schema: an untyped one would allow only `null`). */
export const ANY_JSON: GrammarSchema = {
  oneOf: [
    { type: ['string', 'number', 'boolean', 'null'] },
    { type: 'object', additionalProperties: true },
    { type: 'array' },
  ],
};

type Json = Readonly<Record<string, unknown>>;

/** Keywords that constrain nothing the grammar needs (annotations). */
const ANNOTATIONS = new Set([
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'definitions',
  '$defs',
  'strict',
]);

/** Keywords the translation below honours (the others of a schema are recorded as relaxed). */
const HONOURED = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'enum',
  'const',
  'oneOf',
  'anyOf',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'format',
  '$ref',
]);

export class SchemaError extends Error {
  override readonly name = 'SchemaError';
}

interface Ctx {
  readonly root: Json;
  readonly relaxed: Set<string>;
  readonly refDepth: number;
  readonly depth: number;
}

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isLiteral = (v: unknown): v is string | number | boolean | null =>
  v === null || ['string', 'number', 'boolean'].includes(typeof v);

function resolveRef(ref: string, ctx: Ctx): unknown {
  const m = /^#\/(definitions|\$defs)\/(.+)$/.exec(ref);
  if (!m) return undefined;
  const defs = ctx.root[m[1]!];
  const name = m[2]!.replace(/~1/g, '/').replace(/~0/g, '~');
  return isObj(defs) ? defs[name] : undefined;
}

/** The subsets of `optional` to offer as alternatives, in the properties' order. */
function objectVariants(optional: readonly string[], ctx: Ctx): string[][] {
  if (optional.length <= MAX_OPTIONAL_ALTERNATIVES) {
    const out: string[][] = [];
    for (let mask = 0; mask < 1 << optional.length; mask++) out.push(optional.filter((_, i) => mask & (1 << i)));
    return out;
  }
  // Too many alternatives: offer none of the optional properties, or all of them.
  ctx.relaxed.add(`more than ${MAX_OPTIONAL_ALTERNATIVES} optional properties`);
  return [[], [...optional]];
}

function translateObject(s: Json, ctx: Ctx): GrammarSchema {
  const props = isObj(s.properties) ? s.properties : {};
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r) => typeof r === 'string') : []);
  const names = Object.keys(props);
  const translated = Object.fromEntries(names.map((n) => [n, translate(props[n], ctx)] as const));
  let additional: boolean | GrammarSchema | undefined;
  if (isObj(s.additionalProperties)) additional = translate(s.additionalProperties, ctx);
  else if (s.additionalProperties === true || (s.additionalProperties === undefined && names.length === 0))
    additional = true;
  // A schema that allows unnamed properties besides named ones: only the named ones are generated.
  else if (s.additionalProperties === undefined) ctx.relaxed.add('additionalProperties (not generated)');
  if (s.propertyNames !== undefined) ctx.relaxed.add('propertyNames');
  const optional = names.filter((n) => !required.has(n));
  const variants = objectVariants(optional, ctx).map((chosen): GrammarSchema => {
    const keep = new Set([...names.filter((n) => required.has(n)), ...chosen]);
    const properties = Object.fromEntries(names.filter((n) => keep.has(n)).map((n) => [n, translated[n]!] as const));
    return {
      type: 'object',
      ...(Object.keys(properties).length > 0 ? { properties } : {}),
      ...(additional !== undefined ? { additionalProperties: additional } : {}),
    };
  });
  return variants.length === 1 ? variants[0]! : { oneOf: variants };
}

function translateArray(s: Json, ctx: Ctx): GrammarSchema {
  const count = (k: string): number | undefined =>
    typeof s[k] === 'number' && Number.isInteger(s[k]) && (s[k] as number) >= 0 ? (s[k] as number) : undefined;
  const minItems = count('minItems');
  const maxItems = count('maxItems');
  if (s.uniqueItems === true) ctx.relaxed.add('uniqueItems');
  if (s.contains !== undefined) ctx.relaxed.add('contains');
  // Draft 7 tuples are `items: [...]`; 2020-12 tuples are `prefixItems`.
  const tuple = Array.isArray(s.items) ? s.items : Array.isArray(s.prefixItems) ? s.prefixItems : undefined;
  const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
  return {
    type: 'array',
    ...(tuple ? { prefixItems: tuple.map((t) => translate(t, ctx)) } : {}),
    ...(isObj(rest) ? { items: translate(rest, ctx) } : {}),
    ...(minItems !== undefined ? { minItems } : {}),
    ...(maxItems !== undefined ? { maxItems } : {}),
  };
}

function translateString(s: Json, ctx: Ctx): GrammarSchema {
  if (typeof s.format === 'string') {
    if (FORMATS.includes(s.format)) return { type: 'string', format: s.format as 'date' | 'time' | 'date-time' };
    ctx.relaxed.add(`format ${s.format}`);
  }
  const len = (k: string): number | undefined =>
    typeof s[k] === 'number' && Number.isInteger(s[k]) && (s[k] as number) >= 0 ? (s[k] as number) : undefined;
  const minLength = len('minLength');
  const maxLength = len('maxLength');
  return {
    type: 'string',
    ...(minLength !== undefined ? { minLength } : {}),
    ...(maxLength !== undefined ? { maxLength } : {}),
  };
}

function translateTyped(type: string, s: Json, ctx: Ctx): GrammarSchema {
  switch (type) {
    case 'object':
      return translateObject(s, ctx);
    case 'array':
      return translateArray(s, ctx);
    case 'string':
      return translateString(s, ctx);
    default:
      if (!SCALARS.includes(type)) throw new SchemaError(`unknown type ${JSON.stringify(type)}`);
      return { type: type as GrammarScalar };
  }
}

function translate(schema: unknown, parent: Ctx): GrammarSchema {
  const ctx: Ctx = { ...parent, depth: parent.depth + 1 };
  if (ctx.depth > MAX_DEPTH) throw new SchemaError(`nested deeper than ${MAX_DEPTH} levels`);
  if (schema === true || (isObj(schema) && Object.keys(schema).every((k) => ANNOTATIONS.has(k)))) return ANY_JSON;
  if (schema === false) throw new SchemaError('a `false` schema allows no value');
  if (!isObj(schema)) throw new SchemaError(`a schema must be an object or a boolean, not ${typeof schema}`);
  for (const k of Object.keys(schema)) if (!HONOURED.has(k) && !ANNOTATIONS.has(k)) ctx.relaxed.add(k);

  if (typeof schema.$ref === 'string') {
    if (ctx.refDepth >= MAX_REF_DEPTH) {
      ctx.relaxed.add('$ref (recursive)');
      return ANY_JSON;
    }
    const target = resolveRef(schema.$ref, ctx);
    if (target === undefined) throw new SchemaError(`$ref ${schema.$ref} names no definition of this schema`);
    return translate(target, { ...ctx, refDepth: ctx.refDepth + 1 });
  }
  if ('const' in schema) {
    if (!isLiteral(schema.const)) {
      ctx.relaxed.add('const (not a scalar)');
      return ANY_JSON;
    }
    return { const: schema.const };
  }
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter(isLiteral);
    if (values.length === 0) throw new SchemaError('enum has no scalar value');
    if (values.length < schema.enum.length) ctx.relaxed.add('enum (non-scalar values dropped)');
    return { enum: values };
  }
  const alternatives = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
  if (alternatives) {
    if (alternatives.length === 0) throw new SchemaError('oneOf/anyOf has no alternative');
    const { oneOf: _o, anyOf: _a, ...rest } = schema;
    // Keywords beside the alternatives apply to each of them.
    return { oneOf: alternatives.map((alt) => translate(isObj(alt) ? { ...rest, ...alt } : alt, ctx)) };
  }
  const type = schema.type;
  if (Array.isArray(type)) {
    if (type.length === 0) throw new SchemaError('type is an empty list');
    const each = type.map((t) => translateTyped(String(t), schema, ctx));
    return each.length === 1 ? each[0]! : { oneOf: each };
  }
  if (typeof type === 'string') return translateTyped(type, schema, ctx);
  if (isObj(schema.properties)) return translateObject(schema, ctx);
  ctx.relaxed.add('untyped schema');
  return ANY_JSON;
}

/** One tool's arguments as a grammar schema; `relaxed` collects what the grammar does not enforce. */
export function argumentsGrammar(parameters: Json, relaxed: Set<string>): GrammarSchema {
  if (Object.keys(parameters).length === 0) return { type: 'object' };
  if (parameters.type !== 'object') throw new SchemaError('function parameters must be a JSON Schema of type object');
  return translate(parameters, { root: parameters, relaxed, refDepth: 0, depth: 0 });
}

export interface EnvelopeTool {
  readonly name: string;
  readonly parameters: Json;
}

export interface EnvelopeOptions {
  /** Tools the model may call. */
  readonly tools: readonly EnvelopeTool[];
  /** `auto`: calls or a final answer; `required`: at least one call. */
  readonly mode: 'auto' | 'required';
  /** The most calls one reply may make (1 when parallel calls are off). */
  readonly maxCalls: number;
}

export interface Envelope {
  readonly schema: GrammarSchema;
  /** Keywords of the tools' schemas the grammar does not enforce, as `tool: keyword`. */
  readonly relaxed: readonly string[];
}

/**
 * The reply's schema. Throws `SchemaError` (with the tool's index in `toolIndex`) for a tool schema that cannot
 * be turned into a grammar.
 */
export function envelopeSchema(o: EnvelopeOptions): Envelope {
  const relaxed: string[] = [];
  const calls = o.tools.map((t, i): GrammarSchema => {
    const own = new Set<string>();
    let args: GrammarSchema;
    try {
      args = argumentsGrammar(t.parameters, own);
    } catch (err) {
      throw Object.assign(err as Error, { toolIndex: i });
    }
    relaxed.push(...[...own].sort().map((k) => `${t.name}: ${k}`));
    return { type: 'object', properties: { name: { const: t.name }, arguments: args } };
  });
  const toolCalls: GrammarSchema = {
    type: 'object',
    properties: {
      tool_calls: {
        type: 'array',
        items: calls.length === 1 ? calls[0]! : { oneOf: calls },
        minItems: 1,
        maxItems: Math.max(1, o.maxCalls),
      },
    },
  };
  const schema: GrammarSchema =
    o.mode === 'required'
      ? toolCalls
      : { oneOf: [toolCalls, { type: 'object', properties: { final_answer: { type: 'string' } } }] };
  return { schema, relaxed };
}
