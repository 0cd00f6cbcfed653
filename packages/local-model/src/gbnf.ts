/**
 * The pieces of GBNF (llama.cpp's grammar format) the grammar compiler writes: named rules shared by their body,
 * literals, character classes, the characters of a JSON string, and integer ranges. Pure text building; no
 * dependency on node-llama-cpp.
 */
import type { Ranges } from './regex';

/** Rules by name; a body written twice gets one rule. */
export class RuleSet {
  private readonly byBody = new Map<string, string>();
  private readonly rules: Array<readonly [string, string]> = [];
  private readonly names = new Set<string>(['root']);

  /** The name of a rule with this body (created on first use); `hint` becomes part of a new rule's name. */
  rule(hint: string, body: string): string {
    const known = this.byBody.get(body);
    if (known !== undefined) return known;
    const name = this.reserve(hint);
    this.define(name, body);
    return name;
  }

  /** A name for a rule defined later (a `$ref` that may refer to itself). */
  reserve(hint: string): string {
    const base =
      hint
        .replace(/[^a-zA-Z0-9-]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .toLowerCase()
        .slice(0, 40) || 'r';
    let name = base;
    for (let i = 2; this.names.has(name); i++) name = `${base}-${i}`;
    this.names.add(name);
    return name;
  }

  define(name: string, body: string): void {
    this.byBody.set(body, name);
    this.rules.push([name, body]);
  }

  /** The grammar text, `root` first. */
  text(root: string): string {
    return [`root ::= ${root}`, ...this.rules.map(([n, b]) => `${n} ::= ${b}`)].join('\n');
  }
}

const hex = (v: number, width: number): string => v.toString(16).toUpperCase().padStart(width, '0');

/** One code point as GBNF writes it inside a literal or a class. */
function charEscape(v: number, inClass: boolean): string {
  if ((v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5a) || (v >= 0x61 && v <= 0x7a)) return String.fromCharCode(v);
  if (!inClass && v >= 0x20 && v < 0x7f && v !== 0x22 && v !== 0x5c) return String.fromCharCode(v);
  return v <= 0xff ? `\\x${hex(v, 2)}` : `\\u${hex(v, 4)}`;
}

/** A GBNF literal matching exactly `text`. */
export function literal(text: string): string {
  let out = '"';
  for (const ch of text) out += charEscape(ch.codePointAt(0)!, false);
  return `${out}"`;
}

/** A GBNF character class of these ranges. */
export function charClass(ranges: Ranges): string {
  const parts = ranges.map(([a, b]) =>
    a === b ? charEscape(a, true) : `${charEscape(a, true)}-${charEscape(b, true)}`,
  );
  return `[${parts.join('')}]`;
}

/** Characters a JSON string may hold unescaped: not `"`, not `\`, no control character (nor DEL). */
const PLAIN: Ranges = [
  [0x20, 0x21],
  [0x23, 0x5b],
  [0x5d, 0x7e],
  [0x80, 0xd7ff],
  [0xe000, 0xffff],
];
/** Characters written as a short escape inside a JSON string. */
const SHORT_ESCAPES: ReadonlyArray<readonly [number, string]> = [
  [0x22, '\\"'],
  [0x5c, '\\\\'],
  [0x0a, '\\n'],
  [0x09, '\\t'],
  [0x0d, '\\r'],
  [0x08, '\\b'],
  [0x0c, '\\f'],
];

const intersect = (a: Ranges, b: Ranges): Ranges =>
  a.flatMap(([x, y]) =>
    b.flatMap(([p, q]): Array<readonly [number, number]> =>
      Math.max(x, p) <= Math.min(y, q) ? [[Math.max(x, p), Math.min(y, q)]] : [],
    ),
  );

/**
 * One character of `ranges` as it is written inside a JSON string: plainly, or as its short escape. Other
 * control characters of the set are left out (a subset: never a character outside the set). Undefined when none
 * of the set can be written.
 */
export function jsonStringChar(ranges: Ranges): string | undefined {
  const plain = intersect(ranges, PLAIN);
  const alts: string[] = [];
  if (plain.length > 0) alts.push(charClass(plain));
  for (const [v, esc] of SHORT_ESCAPES) if (ranges.some(([a, b]) => a <= v && v <= b)) alts.push(literal(esc));
  if (alts.length === 0) return undefined;
  return alts.length === 1 ? alts[0]! : `(${alts.join(' | ')})`;
}

/** Any one character of a JSON string (one UTF-16 unit: the BMP without surrogates, or an escape). */
export const ANY_STRING_CHAR = `(${charClass(PLAIN)} | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4}))`;

/** `x` repeated `min` to `max` times (`max` Infinity: unbounded); '' for none. */
export function repeat(x: string, min: number, max: number): string {
  if (max === 0) return '';
  if (min === 0 && max === Infinity) return `${x}*`;
  if (min === 1 && max === Infinity) return `${x}+`;
  if (min === 0 && max === 1) return `${x}?`;
  if (min === max) return min === 1 ? x : `${x}{${min}}`;
  return `${x}{${min},${max === Infinity ? '' : max}}`;
}

/** Decimal digit strings of equal length from `lo` to `hi` (as strings), without a leading-zero rule. */
function sameLength(lo: string, hi: string): string[] {
  if (lo.length === 0) return [''];
  const a = Number(lo[0]);
  const b = Number(hi[0]);
  const restLo = lo.slice(1);
  const restHi = hi.slice(1);
  const n = restLo.length;
  const digits = (x: number, y: number): string => (x === y ? `"${x}"` : `[${x}-${y}]`);
  const tail = (s: string): string => (s === '' ? '' : ` ${s}`);
  const any = n === 0 ? '' : n === 1 ? '[0-9]' : `[0-9]{${n}}`;
  if (a === b) return sameLength(restLo, restHi).map((r) => `${digits(a, a)}${tail(r)}`);
  if (/^0*$/.test(restLo) && /^9*$/.test(restHi)) return [`${digits(a, b)}${tail(any)}`];
  const out: string[] = [];
  const loFull = /^0*$/.test(restLo);
  const hiFull = /^9*$/.test(restHi);
  const midFrom = loFull ? a : a + 1;
  const midTo = hiFull ? b : b - 1;
  if (!loFull) out.push(...sameLength(restLo, '9'.repeat(n)).map((r) => `${digits(a, a)}${tail(r)}`));
  if (midFrom <= midTo) out.push(`${digits(midFrom, midTo)}${tail(any)}`);
  if (!hiFull) out.push(...sameLength('0'.repeat(n), restHi).map((r) => `${digits(b, b)}${tail(r)}`));
  return out;
}

/** The non-negative integers `lo..hi`, written without leading zeros. */
function naturals(lo: number, hi: number): string[] {
  const out: string[] = [];
  for (let len = String(lo).length; len <= String(hi).length; len++) {
    const from = Math.max(lo, len === 1 ? 0 : 10 ** (len - 1));
    const to = Math.min(hi, 10 ** len - 1);
    if (from <= to) out.push(...sameLength(String(from), String(to)));
  }
  return out;
}

/** A GBNF expression for the integers `lo..hi` as JSON writes them (safe integers; `lo <= hi`). */
export function integerRange(lo: number, hi: number): string {
  const alts: string[] = [];
  if (hi >= 0) alts.push(...naturals(Math.max(lo, 0), hi));
  if (lo < 0) {
    const neg = naturals(Math.max(-hi, 1), -lo);
    alts.push(neg.length === 1 ? `"-" ${neg[0]}` : `"-" (${neg.join(' | ')})`);
  }
  return alts.length === 1 ? alts[0]! : `(${alts.join(' | ')})`;
}
