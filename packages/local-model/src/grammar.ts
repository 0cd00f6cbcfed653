/**
 * The grammar a reply is generated under, compiled to GBNF (llama.cpp's grammar format): one compact JSON
 * object, either `{"tool_calls":[{"name":…,"arguments":…}]}` or `{"tool_calls":[],"final_answer":"…"}` (the
 * answer after an empty list of calls: a small model that must first say whether it calls a tool decides better
 * at the list's first element than at the object's first key), where each call's `name` is one of the offered tools and its `arguments` are a JSON text the tool's JSON Schema accepts.
 *
 * The compiler is sound before it is complete: every text the grammar admits is valid against the schema, and
 * where the schema allows more than a grammar can say, the grammar allows a subset (keys in the schema's order,
 * no whitespace, no exponent in numbers, an unanchored `pattern` matched from the string's start, an unbounded
 * `pattern` repeat capped to fit `maxLength`). What it enforces: types, `properties`/`required` (any number of
 * optional properties), `additionalProperties` (false, or a schema for the other keys, with `propertyNames`),
 * `enum`, `const`, `oneOf`/`anyOf`, `items`/`prefixItems`, `minItems`/`maxItems`, `minLength`/`maxLength`,
 * `pattern` (ECMAScript syntax without lookaround or back-references: regex.ts), integer `minimum`/`maximum`/
 * `exclusiveMinimum`/`exclusiveMaximum`, a number's `minimum: 0`, the formats `date`, `time`, `date-time`,
 * `uuid`, and `$ref` into `definitions`/`$defs` (recursive references become recursive rules). What it does not
 * enforce is returned as `relaxed` (`wallet_debit: uniqueItems`): the model may produce a value there that the
 * schema refuses, and the client validates the arguments as it would anyone's.
 */
import { ANY_STRING_CHAR, integerRange, jsonStringChar, literal, repeat, RuleSet } from './gbnf';
import { capLength, lengthRange, parsePattern, PatternUnsupported, type RegexNode } from './regex';

type Json = Readonly<Record<string, unknown>>;

export class SchemaError extends Error {
  override readonly name = 'SchemaError';
}

/** Keywords that constrain nothing (annotations). */
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

/** Keywords the compiler reads (whether a particular use of one is enforced is decided where it is read). */
const READ = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'enum',
  'const',
  'oneOf',
  'anyOf',
  'items',
  'prefixItems',
  'additionalItems',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minProperties',
  'maxProperties',
  'multipleOf',
  'uniqueItems',
  'contains',
  '$ref',
]);

const MAX_DEPTH = 32;
/** Integers with no bounds are written with at most 15 digits: safe integers, as JSON Schema validators want. */
const UNBOUNDED_INTEGER = 10 ** 15 - 1;

const FORMATS: Readonly<Record<string, string>> = {
  date: `[0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [12] [0-9] | "3" [01])`,
  time: `([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,6})? ("Z" | [+\\x2D] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9])`,
  uuid: `[0-9a-f]{8} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{12}`,
};
const DATE_TIME = `${FORMATS.date} "T" ${FORMATS.time}`;

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (s: Json, k: string): number | undefined =>
  typeof s[k] === 'number' && Number.isInteger(s[k]) && (s[k] as number) >= 0 ? (s[k] as number) : undefined;

class Compiler {
  private readonly refs = new Map<string, string>();
  private readonly generic = new Map<string, string>();

  constructor(
    readonly rules: RuleSet,
    private readonly root: Json,
    readonly relaxed: Set<string>,
  ) {}

  /** A GBNF expression for the JSON values `schema` accepts (a subset of them, see the module comment). */
  value(schema: unknown, depth: number, hint: string): string {
    if (depth > MAX_DEPTH) throw new SchemaError(`nested deeper than ${MAX_DEPTH} levels`);
    if (schema === true) return this.anyJson();
    if (schema === false) throw new SchemaError('a `false` schema allows no value');
    if (!isObj(schema)) throw new SchemaError(`a schema must be an object or a boolean, not ${typeof schema}`);
    const keys = Object.keys(schema);
    if (keys.every((k) => ANNOTATIONS.has(k))) return this.anyJson();
    for (const k of keys) if (!READ.has(k) && !ANNOTATIONS.has(k)) this.relaxed.add(k);

    if (typeof schema.$ref === 'string') return this.ref(schema.$ref, depth);
    if ('const' in schema) return literal(JSON.stringify(schema.const));
    if (Array.isArray(schema.enum)) {
      if (schema.enum.length === 0) throw new SchemaError('enum has no value');
      return alternatives(schema.enum.map((v) => literal(JSON.stringify(v))));
    }
    const alts = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : null;
    if (alts) {
      if (alts.length === 0) throw new SchemaError('oneOf/anyOf has no alternative');
      if (Array.isArray(schema.oneOf) && alts.length > 1) this.relaxed.add('oneOf (more than one may match)');
      const { oneOf: _o, anyOf: _a, ...rest } = schema;
      // Keywords beside the alternatives apply to each of them.
      return alternatives(
        alts.map((alt, i) => this.value(isObj(alt) ? { ...rest, ...alt } : alt, depth + 1, `${hint}-${i}`)),
      );
    }
    const type = schema.type;
    if (Array.isArray(type)) {
      if (type.length === 0) throw new SchemaError('type is an empty list');
      return alternatives(type.map((t) => this.typed(String(t), schema, depth, hint)));
    }
    if (typeof type === 'string') return this.typed(type, schema, depth, hint);
    if (isObj(schema.properties)) return this.typed('object', schema, depth, hint);
    this.relaxed.add('untyped schema');
    return this.anyJson();
  }

  private typed(type: string, s: Json, depth: number, hint: string): string {
    switch (type) {
      case 'object':
        return this.object(s, depth, hint);
      case 'array':
        return this.array(s, depth, hint);
      case 'string':
        return this.string(s, hint);
      case 'integer':
        return this.integer(s);
      case 'number':
        return this.number(s);
      case 'boolean':
        return '("true" | "false")';
      case 'null':
        return '"null"';
      default:
        throw new SchemaError(`unknown type ${JSON.stringify(type)}`);
    }
  }

  private ref(ref: string, depth: number): string {
    const known = this.refs.get(ref);
    if (known !== undefined) return known;
    const m = /^#\/(definitions|\$defs)\/(.+)$/.exec(ref);
    const defs = m ? this.root[m[1]!] : undefined;
    const target = m && isObj(defs) ? defs[m[2]!.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    if (target === undefined) throw new SchemaError(`$ref ${ref} names no definition of this schema`);
    const name = this.rules.reserve(`ref-${m![2]}`);
    this.refs.set(ref, name); // before the body: a definition may refer to itself
    this.rules.define(name, this.value(target, depth + 1, name));
    return name;
  }

  private object(s: Json, depth: number, hint: string): string {
    const props = isObj(s.properties) ? s.properties : {};
    const required = new Set(Array.isArray(s.required) ? s.required.filter((r) => typeof r === 'string') : []);
    const names = Object.keys(props);
    for (const r of required) if (!(r in props)) names.push(r); // required without a schema: any value
    const extra = isObj(s.additionalProperties) || s.additionalProperties === true ? s.additionalProperties : undefined;
    if (names.length === 0 && extra === undefined && s.additionalProperties !== false) {
      if (s.minProperties !== undefined || s.maxProperties !== undefined)
        this.relaxed.add('minProperties/maxProperties');
      return this.anyObject();
    }
    const member = (name: string): string =>
      `${literal(`${JSON.stringify(name)}:`)} ${this.value(props[name] ?? true, depth + 1, `${hint}-${name}`)}`;
    const members = names.map((n) => ({ text: member(n), required: required.has(n) }));
    let body: string;
    if (names.length > 0) {
      if (extra !== undefined && s.additionalProperties !== true)
        this.relaxed.add('additionalProperties beside properties (a key may repeat)');
      if (s.minProperties !== undefined || s.maxProperties !== undefined)
        this.relaxed.add('minProperties/maxProperties');
      body = sequence(members);
    } else {
      // A map: keys from propertyNames, values from additionalProperties.
      const keySchema = isObj(s.propertyNames) ? { type: 'string', ...s.propertyNames } : { type: 'string' };
      const entry = this.rules.rule(
        `${hint}-entry`,
        `${this.string(keySchema, `${hint}-key`)} ":" ${this.value(extra ?? true, depth + 1, `${hint}-value`)}`,
      );
      const min = count(s, 'minProperties') ?? 0;
      const max = count(s, 'maxProperties') ?? Infinity;
      if (min > 0 || max < Infinity) this.relaxed.add('minProperties/maxProperties (a key may repeat)');
      body = max === 0 ? '' : group(`${entry} ${repeat(`("," ${entry})`, Math.max(min - 1, 0), max - 1)}`, min === 0);
    }
    return this.rules.rule(hint, `"{" ${body === '' ? '' : `${body} `}"}"`);
  }

  private array(s: Json, depth: number, hint: string): string {
    const min = count(s, 'minItems') ?? 0;
    const max = count(s, 'maxItems') ?? Infinity;
    if (s.uniqueItems === true) this.relaxed.add('uniqueItems');
    if (s.contains !== undefined) this.relaxed.add('contains');
    const tuple = Array.isArray(s.items) ? s.items : Array.isArray(s.prefixItems) ? s.prefixItems : undefined;
    const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
    if (tuple) {
      if (tuple.length < min || tuple.length > max) this.relaxed.add('minItems/maxItems beside a tuple');
      const items = tuple.map((t, i) => this.value(t, depth + 1, `${hint}-${i}`));
      const restItem = isObj(rest) || rest === true ? this.value(rest, depth + 1, `${hint}-item`) : undefined;
      const tail = restItem ? ` ${repeat(`("," ${restItem})`, 0, max - tuple.length)}` : '';
      const body = items.length === 0 ? '' : `${items.join(' "," ')}${tail}`;
      return this.rules.rule(hint, `"[" ${body === '' ? '' : `${body} `}"]"`);
    }
    if (max === 0) return '"[]"';
    const item = this.value(isObj(rest) || rest === true ? rest : true, depth + 1, `${hint}-item`);
    const body = group(`${item} ${repeat(`("," ${item})`, Math.max(min - 1, 0), max - 1)}`, min === 0);
    return this.rules.rule(hint, `"[" ${body} "]"`);
  }

  private string(s: Json, hint: string): string {
    const minLength = count(s, 'minLength') ?? 0;
    const maxLength = count(s, 'maxLength') ?? Infinity;
    let body: string | undefined;
    if (typeof s.pattern === 'string') {
      body = this.pattern(s.pattern, minLength, maxLength);
      if (body !== undefined && typeof s.format === 'string') this.relaxed.add(`format ${s.format} (beside a pattern)`);
    }
    if (body === undefined && typeof s.format === 'string') {
      const f = s.format === 'date-time' ? DATE_TIME : FORMATS[s.format];
      if (f === undefined) this.relaxed.add(`format ${s.format}`);
      else {
        if (s.minLength !== undefined || s.maxLength !== undefined)
          this.relaxed.add('minLength/maxLength (beside a format)');
        body = f;
      }
    }
    body ??= repeat(ANY_STRING_CHAR, minLength, maxLength);
    return this.rules.rule(hint, `"\\"" ${body === '' ? '' : `${body} `}"\\""`);
  }

  /** The characters of a string matching `pattern` within the lengths, or undefined (relaxed) if it cannot say. */
  private pattern(pattern: string, minLength: number, maxLength: number): string | undefined {
    try {
      const parsed = parsePattern(pattern);
      let node: RegexNode | undefined = parsed.node;
      if (lengthRange(node).max > maxLength) node = capLength(node, maxLength);
      if (node === undefined) {
        this.relaxed.add('maxLength (beside a pattern)');
        node = parsed.node;
      }
      const len = lengthRange(node);
      let text = regexGbnf(node);
      if (!parsed.anchoredEnd) {
        // The pattern may match a prefix: any characters may follow, within the lengths.
        const room = maxLength === Infinity ? Infinity : maxLength - len.max;
        text = `${text} ${repeat(ANY_STRING_CHAR, Math.max(minLength - len.min, 0), Math.max(room, 0))}`;
      } else if (len.min < minLength) this.relaxed.add('minLength (beside a pattern)');
      // An unanchored start is matched from the start: a subset of the strings the pattern allows.
      return text;
    } catch (err) {
      if (!(err instanceof PatternUnsupported)) throw err;
      this.relaxed.add(`pattern (${err.message})`);
      return undefined;
    }
  }

  private integer(s: Json): string {
    const num = (k: string): number | undefined => (typeof s[k] === 'number' ? (s[k] as number) : undefined);
    const bounds = [
      num('minimum') !== undefined ? Math.ceil(num('minimum')!) : undefined,
      num('exclusiveMinimum') !== undefined ? Math.floor(num('exclusiveMinimum')!) + 1 : undefined,
    ].filter((x): x is number => x !== undefined);
    const uppers = [
      num('maximum') !== undefined ? Math.floor(num('maximum')!) : undefined,
      num('exclusiveMaximum') !== undefined ? Math.ceil(num('exclusiveMaximum')!) - 1 : undefined,
    ].filter((x): x is number => x !== undefined);
    const lo = Math.max(-Number.MAX_SAFE_INTEGER, bounds.length > 0 ? Math.max(...bounds) : -UNBOUNDED_INTEGER);
    const hi = Math.min(Number.MAX_SAFE_INTEGER, uppers.length > 0 ? Math.min(...uppers) : UNBOUNDED_INTEGER);
    if (s.multipleOf !== undefined) this.relaxed.add('multipleOf');
    if (lo > hi) throw new SchemaError(`no integer lies between ${lo} and ${hi}`);
    return this.rules.rule(`int-${lo}-${hi}`, integerRange(lo, hi));
  }

  private number(s: Json): string {
    const bounded = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'].filter((k) => s[k] !== undefined);
    const nonNegative = bounded.length === 1 && s.minimum === 0;
    if (!nonNegative) for (const k of bounded) this.relaxed.add(`${k} (of a number)`);
    if (s.multipleOf !== undefined) this.relaxed.add('multipleOf');
    const body = `("0" | [1-9] [0-9]{0,14}) ("." [0-9]{1,12})?`;
    return this.rules.rule(nonNegative ? 'number-nonneg' : 'number', nonNegative ? body : `"-"? ${body}`);
  }

  private anyJson(): string {
    return this.genericRule('json-value');
  }

  private anyObject(): string {
    return this.genericRule('json-object');
  }

  /** The rules for any JSON value (defined once, on first use). */
  private genericRule(name: 'json-value' | 'json-object'): string {
    if (this.generic.size === 0) {
      const names = {
        value: this.rules.reserve('json-value'),
        object: this.rules.reserve('json-object'),
        array: this.rules.reserve('json-array'),
        string: this.rules.reserve('json-string'),
      };
      this.rules.define(
        names.value,
        `${names.object} | ${names.array} | ${names.string} | "-"? ("0" | [1-9] [0-9]{0,14}) ("." [0-9]{1,12})? | "true" | "false" | "null"`,
      );
      this.rules.define(
        names.object,
        `"{" (${names.string} ":" ${names.value} ("," ${names.string} ":" ${names.value})*)? "}"`,
      );
      this.rules.define(names.array, `"[" (${names.value} ("," ${names.value})*)? "]"`);
      this.rules.define(names.string, `"\\"" ${ANY_STRING_CHAR}* "\\""`);
      this.generic.set('json-value', names.value);
      this.generic.set('json-object', names.object);
    }
    return this.generic.get(name)!;
  }
}

function alternatives(alts: readonly string[]): string {
  const unique = [...new Set(alts)];
  return unique.length === 1 ? unique[0]! : `(${unique.join(' | ')})`;
}

function group(text: string, optional: boolean): string {
  return optional ? `(${text})?` : text;
}

/**
 * An object's members in the schema's order, commas between them: required ones always, optional ones each
 * present or not (linear in the members, whatever their number).
 */
function sequence(members: ReadonlyArray<{ readonly text: string; readonly required: boolean }>): string {
  const from = (i: number, first: boolean): string => {
    if (i === members.length) return '';
    const m = members[i]!;
    const rest = (f: boolean): string => {
      const r = from(i + 1, f);
      return r === '' ? '' : ` ${r}`;
    };
    if (m.required) return `${first ? m.text : `"," ${m.text}`}${rest(false)}`;
    if (!first) return `("," ${m.text})?${rest(false)}`;
    const withIt = `${m.text}${rest(false)}`;
    const without = from(i + 1, true);
    return without === '' ? `(${withIt})?` : `(${withIt} | ${without})`;
  };
  return from(0, true);
}

/** A regex tree as the characters of a JSON string. */
function regexGbnf(n: RegexNode): string {
  switch (n.kind) {
    case 'set': {
      const c = jsonStringChar(n.ranges);
      if (c === undefined) throw new PatternUnsupported('a character class with no character a JSON string can hold');
      return c;
    }
    case 'seq':
      return n.items.length === 0 ? '' : `(${n.items.map(regexGbnf).join(' ')})`;
    case 'alt':
      return `(${n.alts.map(regexGbnf).join(' | ')})`;
    case 'repeat': {
      const inner = regexGbnf(n.node);
      return inner === '' ? '' : repeat(`(${inner})`, n.min, n.max);
    }
  }
}

/** A whole grammar whose root is the arguments of one tool (what the tests read). */
export function argumentsGrammar(parameters: Json, relaxed: Set<string> = new Set()): string {
  const rules = new RuleSet();
  return rules.text(argumentsExpression(new Compiler(rules, parameters, relaxed), parameters, 'args'));
}

function argumentsExpression(c: Compiler, parameters: Json, hint: string): string {
  if (Object.keys(parameters).length === 0) return '"{}"';
  if (parameters.type !== 'object') throw new SchemaError('function parameters must be a JSON Schema of type object');
  return c.value(parameters, 0, hint);
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
  /** The GBNF text. */
  readonly gbnf: string;
  /** Keywords of the tools' schemas the grammar does not enforce, as `tool: keyword`. */
  readonly relaxed: readonly string[];
}

/**
 * The reply's grammar. Throws `SchemaError` (with the tool's index in `toolIndex`) for a tool schema that cannot
 * be turned into a grammar.
 */
export function envelopeGrammar(o: EnvelopeOptions): Envelope {
  const rules = new RuleSet();
  const relaxed: string[] = [];
  const calls = o.tools.map((t, i) => {
    const own = new Set<string>();
    let args: string;
    try {
      args = argumentsExpression(new Compiler(rules, t.parameters, own), t.parameters, `args-${t.name}`);
    } catch (err) {
      throw Object.assign(err as Error, { toolIndex: i });
    }
    relaxed.push(...[...own].sort().map((k) => `${t.name}: ${k}`));
    return rules.rule(`call-${t.name}`, `${literal(`{"name":${JSON.stringify(t.name)},"arguments":`)} ${args} "}"`);
  });
  if (calls.length === 0) throw new SchemaError('no tool to call');
  const call = calls.length === 1 ? calls[0]! : rules.rule('call', calls.join(' | '));
  const toolCalls = `${literal('{"tool_calls":[')} ${call} ${repeat(`("," ${call})`, 0, Math.max(1, o.maxCalls) - 1)} "]}"`;
  const answer = `${literal('{"tool_calls":[],"final_answer":"')} ${ANY_STRING_CHAR}* "\\"}"`;
  return { gbnf: rules.text(o.mode === 'required' ? toolCalls : `${toolCalls} | ${answer}`), relaxed };
}
