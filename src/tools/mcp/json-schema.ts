/**
 * An MCP tool's JSON Schema as a check the workflow runs on a proposal (and on a result), inside the sandbox.
 *
 * The decision (docs/mcp.md, "Why zod and not ajv"): the schema is converted once per worker with zod's own
 * `z.fromJSONSchema`, which the workflow bundle carries already (zod is in it for every tool), so the MCP tool set
 * adds only this gate (about 5 KB minified) and no code generation to the sandbox; ajv 8 with its formats would add
 * about 257 KB minified to every bundle and compile validators with `new Function` inside the workflow context
 * (`lab/bench/mcp-schema-bundle.ts` measures both). zod's converter covers a subset of JSON Schema, so a gate in
 * front of it admits only the keywords it enforces as JSON Schema means them, and refuses the rest by name: a
 * schema is never checked more loosely than it says. The gate's list is backed by a differential test against ajv
 * (test/unit/mcp-json-schema.test.ts).
 *
 * Three properties hold by construction:
 * - the check never transforms: it answers with issues, and the value the workflow keys and sends is exactly the
 *   proposal's JSON (zod would fill defaults and strip keys; the wrapper returns the input as it came);
 * - what the gate cannot vouch for is refused (`McpSchemaError`), never skipped: `not`, conditionals, dependent and
 *   unevaluated keywords, dynamic and external references, `const`/`enum` of objects or arrays, `nullable`, a
 *   type's keywords (`minLength`, `properties`, ...) in a schema that names no `type`, and regular expressions that can backtrack without bound (a nested quantifier or a backreference: a model's text
 *   must not be able to stall a workflow task);
 * - words the vocabulary uses only as annotations (`title`, `description`, `default`, `examples`, ...) and unknown
 *   keywords are ignored, as JSON Schema itself ignores them.
 */
import { z } from 'zod';

/** A schema, or part of one, that Ledgerloop will not check because it could not check it faithfully. */
export class McpSchemaError extends Error {
  override readonly name = 'Mcp.SchemaUnsupported';
}

/**
 * Keywords that constrain one JSON type. JSON Schema applies them to instances of that type whatever `type` says;
 * zod's converter applies them only under a `type`, so a schema that uses one must name its type.
 */
const TYPE_SPECIFIC = new Set([
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'propertyNames',
  'minProperties',
  'maxProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
]);

/** Schema keywords the conversion enforces (with the shape checks below): the type-specific ones and these. */
const ENFORCED = new Set([
  ...TYPE_SPECIFIC,
  'type',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  '$defs',
  'definitions',
]);

/** Keywords refused outright: the converter rejects or loosens them, or they change the schema's meaning. */
const REFUSED: Readonly<Record<string, string>> = {
  not: 'negation',
  if: 'conditional schemas',
  then: 'conditional schemas',
  else: 'conditional schemas',
  dependentSchemas: 'dependent schemas',
  dependentRequired: 'dependent requirements',
  dependencies: 'dependencies',
  unevaluatedProperties: 'unevaluated properties',
  unevaluatedItems: 'unevaluated items',
  $dynamicRef: 'dynamic references',
  $dynamicAnchor: 'dynamic references',
  $recursiveRef: 'recursive references',
  $recursiveAnchor: 'recursive references',
  nullable: 'the OpenAPI `nullable` keyword (write `type: ["string", "null"]`)',
  contentSchema: 'content schemas',
};

/** Keywords whose value is a schema, a list of schemas, or a map of names to schemas. */
const ONE_SCHEMA = ['additionalProperties', 'propertyNames', 'contains', 'additionalItems'];
const SCHEMA_LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'definitions'];

/** Limits of a schema the gate walks: deep or huge schemas are refused rather than walked. */
export const MAX_SCHEMA_DEPTH = 32;
export const MAX_SCHEMA_NODES = 2_000;

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function primitive(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && isFinite(v));
}

/**
 * Whether `pattern` can backtrack without bound: a quantified group that itself holds a quantifier or an
 * alternation (`(a+)+`, `(a|aa)*`), or a backreference. Conservative: some safe patterns are refused too, and the
 * team rewrites them in the checked-in declaration.
 */
export function unboundedBacktracking(pattern: string): string | null {
  if (/\\[1-9]|\\k</.test(pattern)) return 'a backreference';
  // For each open group: whether it holds a quantifier or an alternation.
  const stack: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') stack.push(false);
    else if (c === '|' && stack.length > 0) stack[stack.length - 1] = true;
    else if (c === '*' || c === '+' || c === '{' || c === '?') {
      if (stack.length > 0 && c !== '?') stack[stack.length - 1] = true;
    } else if (c === ')') {
      const risky = stack.pop() ?? false;
      const next = pattern[i + 1];
      const quantified = next === '*' || next === '+' || (next === '{' && /^\{\d+,\d*\}/.test(pattern.slice(i + 1)));
      if (risky && quantified) return 'a quantified group that holds a quantifier or an alternation';
      if (risky && stack.length > 0) stack[stack.length - 1] = true;
    }
  }
  return null;
}

interface Walk {
  nodes: number;
  readonly where: string;
}

/** Refuses what the conversion would not check faithfully. `path` names the place for the error. */
function gate(schema: unknown, path: string, depth: number, walk: Walk): void {
  if (typeof schema === 'boolean') return;
  if (!isPlainObject(schema)) throw new McpSchemaError(`${walk.where} at ${path}: a schema is an object or a boolean`);
  if (depth > MAX_SCHEMA_DEPTH) throw new McpSchemaError(`${walk.where}: nested deeper than ${MAX_SCHEMA_DEPTH}`);
  if (++walk.nodes > MAX_SCHEMA_NODES) throw new McpSchemaError(`${walk.where}: more than ${MAX_SCHEMA_NODES} parts`);
  const untyped = schema['type'] === undefined ? Object.keys(schema).find((k) => TYPE_SPECIFIC.has(k)) : undefined;
  if (untyped !== undefined)
    throw new McpSchemaError(
      `${walk.where} at ${path}: ${untyped} without a type is not supported; name the type it applies to`,
    );
  for (const [key, value] of Object.entries(schema)) {
    const at = `${path}/${key}`;
    const refused = REFUSED[key];
    if (refused !== undefined) {
      // `{ not: {} }` is how converters write "never": the one negation that is exact.
      if (key === 'not' && isPlainObject(value) && Object.keys(value).length === 0) continue;
      throw new McpSchemaError(`${walk.where} at ${at}: ${refused} are not supported; edit the declaration`);
    }
    if (!ENFORCED.has(key)) continue; // an annotation, or a keyword JSON Schema itself ignores
    gateKeyword(key, value, at, depth, walk);
  }
}

function gateKeyword(key: string, value: unknown, at: string, depth: number, walk: Walk): void {
  const bad = (why: string): never => {
    throw new McpSchemaError(`${walk.where} at ${at}: ${why}`);
  };
  if (ONE_SCHEMA.includes(key)) return gate(value, at, depth + 1, walk);
  if (SCHEMA_LIST.includes(key)) {
    if (!Array.isArray(value) || value.length === 0) bad(`${key} must be a non-empty list of schemas`);
    (value as unknown[]).forEach((s, i) => gate(s, `${at}/${i}`, depth + 1, walk));
    return;
  }
  if (SCHEMA_MAP.includes(key)) {
    if (!isPlainObject(value)) bad(`${key} must map names to schemas`);
    for (const [name, s] of Object.entries(value as Record<string, unknown>)) {
      if (key === 'patternProperties') checkPattern(name, `${at}/${name}`, walk);
      gate(s, `${at}/${name}`, depth + 1, walk);
    }
    return;
  }
  switch (key) {
    case 'items':
      if (Array.isArray(value)) value.forEach((s, i) => gate(s, `${at}/${i}`, depth + 1, walk));
      else gate(value, at, depth + 1, walk);
      return;
    case 'type': {
      const types = Array.isArray(value) ? value : [value];
      if (types.length === 0 || !types.every((t) => typeof t === 'string' && JSON_TYPES.has(t)))
        bad(`type must name JSON types (got ${JSON.stringify(value)})`);
      return;
    }
    case 'enum':
      if (!Array.isArray(value)) bad('enum must be a list');
      if (!(value as unknown[]).every(primitive))
        bad('enum of objects or lists is not supported; edit the declaration');
      return;
    case 'const':
      if (!primitive(value)) bad('const of an object or a list is not supported; edit the declaration');
      return;
    case 'required':
      if (!Array.isArray(value) || !value.every((n) => typeof n === 'string')) bad('required must list names');
      return;
    case 'pattern':
      if (typeof value !== 'string') bad('pattern must be a string');
      checkPattern(value as string, at, walk);
      return;
    case 'format':
      if (typeof value !== 'string') bad('format must be a string');
      return;
    case '$ref':
      if (typeof value !== 'string' || !/^#(\/(\$defs|definitions)\/[^/]+)?$/.test(value))
        bad(`only local references into $defs or definitions are supported (got ${JSON.stringify(value)})`);
      return;
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      if (typeof value !== 'number') bad(`${key} must be a number (the draft-4 boolean form is not supported)`);
      return;
    default:
      // The numeric and count keywords.
      if (typeof value !== 'number' && typeof value !== 'boolean') bad(`${key} must be a number`);
  }
}

function checkPattern(pattern: string, at: string, walk: Walk): void {
  try {
    new RegExp(pattern, 'u');
  } catch {
    throw new McpSchemaError(`${walk.where} at ${at}: the pattern is not a valid regular expression`);
  }
  const risk = unboundedBacktracking(pattern);
  if (risk !== null)
    throw new McpSchemaError(`${walk.where} at ${at}: the pattern has ${risk}, which can backtrack without bound`);
}

/** One reason a value does not match its schema: where, and what. */
export interface SchemaIssue {
  readonly path: string;
  readonly message: string;
}

/** A compiled schema: `check` lists why a value does not match (empty when it does) and never transforms it. */
export interface SchemaCheck {
  check(value: unknown): readonly SchemaIssue[];
  /** The same check as a zod schema whose output is its input, for declarations that take a zod schema. */
  readonly zod: z.ZodType<unknown>;
}

/**
 * Compile `schema` (an MCP tool's input or output schema) into a check, or throw `McpSchemaError` naming what
 * cannot be checked faithfully. `where` names the schema in errors, e.g. `files.write_file inputSchema`.
 */
export function compileJsonSchema(schema: unknown, where: string): SchemaCheck {
  gate(schema, '#', 0, { nodes: 0, where });
  let converted: z.ZodType;
  try {
    converted = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    throw new McpSchemaError(`${where}: ${(err as Error).message}`);
  }
  const check = (value: unknown): readonly SchemaIssue[] => {
    const parsed = converted.safeParse(value);
    if (parsed.success) return [];
    return parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
  };
  const wrapper = z.unknown().superRefine((value, ctx) => {
    for (const issue of check(value)) ctx.addIssue({ code: 'custom', message: `${issue.path}: ${issue.message}` });
  });
  // What the model is offered is the declared schema itself (zod writes registered metadata into the JSON Schema
  // it generates: src/planner/tool-schemas.ts).
  const zod = isPlainObject(schema) ? wrapper.meta(withoutDialect(schema)) : wrapper;
  return { check, zod };
}

function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}
