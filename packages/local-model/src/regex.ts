/**
 * A JSON Schema `pattern` (ECMAScript regular expression syntax, as zod and OpenAI read it) parsed into the small
 * tree the grammar compiler turns into GBNF: sequences, alternatives, character sets and bounded or unbounded
 * repeats, with `^`/`$` anchors only at the ends. Sets are code-point ranges of the Basic Multilingual Plane (a
 * character of it is one UTF-16 unit, so lengths agree with `string.length`, which JSON Schema validators count).
 *
 * Anything outside that subset (lookaround, back-references, word boundaries, anchors inside the pattern) is a
 * `PatternUnsupported`: the caller then leaves the pattern to the client's validation and says so.
 */

/** Inclusive code-point ranges, sorted and disjoint. */
export type Ranges = ReadonlyArray<readonly [number, number]>;

export type RegexNode =
  | { readonly kind: 'set'; readonly ranges: Ranges }
  | { readonly kind: 'seq'; readonly items: readonly RegexNode[] }
  | { readonly kind: 'alt'; readonly alts: readonly RegexNode[] }
  | { readonly kind: 'repeat'; readonly node: RegexNode; readonly min: number; readonly max: number };

export interface ParsedPattern {
  readonly node: RegexNode;
  /** Whether the pattern starts with `^` / ends with `$` (otherwise it may match inside a longer string). */
  readonly anchoredStart: boolean;
  readonly anchoredEnd: boolean;
}

export class PatternUnsupported extends Error {
  override readonly name = 'PatternUnsupported';
}

const BMP_MAX = 0xffff;
const SURROGATES: readonly [number, number] = [0xd800, 0xdfff];

export function normalize(ranges: Iterable<readonly [number, number]>): Ranges {
  const sorted = [...ranges].filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: Array<[number, number]> = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** The BMP code points not in `r`, surrogates excluded. */
export function complement(r: Ranges): Ranges {
  const out: Array<[number, number]> = [];
  let next = 0;
  for (const [a, b] of normalize(r)) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= BMP_MAX) out.push([next, BMP_MAX]);
  return subtract(out, [SURROGATES]);
}

export function subtract(r: Ranges, remove: Ranges): Ranges {
  let cur: Array<[number, number]> = normalize(r).map(([a, b]) => [a, b]);
  for (const [x, y] of remove) {
    cur = cur.flatMap(([a, b]): Array<[number, number]> => {
      if (y < a || x > b) return [[a, b]];
      const parts: Array<[number, number]> = [];
      if (a < x) parts.push([a, x - 1]);
      if (b > y) parts.push([y + 1, b]);
      return parts;
    });
  }
  return cur;
}

const cp = (c: string): number => c.codePointAt(0)!;
const DIGIT: Ranges = [[0x30, 0x39]];
const WORD: Ranges = normalize([
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]);
// ECMAScript \s: white space and line terminators.
const SPACE: Ranges = normalize([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);
const LINE_TERMINATORS: Ranges = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];
const ANY_BUT_NEWLINE = complement(LINE_TERMINATORS);

const set = (ranges: Ranges): RegexNode => ({ kind: 'set', ranges: normalize(ranges) });
const single = (c: number): RegexNode => set([[c, c]]);

class Parser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): ParsedPattern {
    const anchoredStart = this.src.startsWith('^');
    if (anchoredStart) this.i = 1;
    const node = this.alternation();
    let anchoredEnd = false;
    if (this.peek() === '$' && this.i === this.src.length - 1) {
      anchoredEnd = true;
      this.i++;
    }
    if (this.i < this.src.length)
      throw new PatternUnsupported(`unexpected ${JSON.stringify(this.peek())} at ${this.i}`);
    return { node, anchoredStart, anchoredEnd };
  }

  private peek(): string | undefined {
    return this.src[this.i];
  }

  private alternation(): RegexNode {
    const alts = [this.sequence()];
    while (this.peek() === '|') {
      this.i++;
      alts.push(this.sequence());
    }
    return alts.length === 1 ? alts[0]! : { kind: 'alt', alts };
  }

  private sequence(): RegexNode {
    const items: RegexNode[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') break;
      if (c === '$' && this.i === this.src.length - 1) break;
      if (c === '^' || c === '$') throw new PatternUnsupported('an anchor inside the pattern');
      items.push(this.quantified(this.atom()));
    }
    return items.length === 1 ? items[0]! : { kind: 'seq', items };
  }

  private quantified(node: RegexNode): RegexNode {
    const c = this.peek();
    let min: number;
    let max: number;
    if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '?') [min, max] = [0, 1];
    else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) return node; // a literal `{`, as ECMAScript reads it without the u flag
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (max < min) throw new PatternUnsupported('a {min,max} with max below min');
      this.i += m[0].length - 1;
    } else return node;
    this.i++;
    if (this.peek() === '?') this.i++; // lazy: the same strings
    return { kind: 'repeat', node, min, max };
  }

  private atom(): RegexNode {
    const c = this.src[this.i++]!;
    switch (c) {
      case '.':
        return set(ANY_BUT_NEWLINE);
      case '[':
        return this.charClass();
      case '(': {
        if (this.src.startsWith('?:', this.i)) this.i += 2;
        else if (this.src.startsWith('?<', this.i) && !/^\?<[=!]/.test(this.src.slice(this.i))) {
          const close = this.src.indexOf('>', this.i);
          if (close < 0) throw new PatternUnsupported('an unterminated group name');
          this.i = close + 1;
        } else if (this.peek() === '?') throw new PatternUnsupported('lookaround');
        const inner = this.alternation();
        if (this.peek() !== ')') throw new PatternUnsupported('an unclosed group');
        this.i++;
        return inner;
      }
      case '\\':
        return this.escape(false) as RegexNode;
      case ')':
      case '*':
      case '+':
      case '?':
        throw new PatternUnsupported(`a stray ${c}`);
      default:
        return single(cp(c));
    }
  }

  /** After a backslash: a set (class escapes) or one code point (inside a class, `asRanges`). */
  private escape(inClass: boolean): RegexNode | number {
    const c = this.src[this.i++];
    if (c === undefined) throw new PatternUnsupported('a trailing backslash');
    switch (c) {
      case 'd':
        return set(DIGIT);
      case 'D':
        return set(complement(DIGIT));
      case 'w':
        return set(WORD);
      case 'W':
        return set(complement(WORD));
      case 's':
        return set(SPACE);
      case 'S':
        return set(complement(SPACE));
      case 'n':
        return inClass ? 0x0a : single(0x0a);
      case 't':
        return inClass ? 0x09 : single(0x09);
      case 'r':
        return inClass ? 0x0d : single(0x0d);
      case 'f':
        return inClass ? 0x0c : single(0x0c);
      case 'v':
        return inClass ? 0x0b : single(0x0b);
      case '0':
        return inClass ? 0 : single(0);
      case 'x':
      case 'u': {
        const len = c === 'x' ? 2 : 4;
        const hex = this.src.slice(this.i, this.i + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) throw new PatternUnsupported(`a malformed \\${c} escape`);
        this.i += len;
        const v = parseInt(hex, 16);
        return inClass ? v : single(v);
      }
      case 'b':
        if (inClass) return 0x08;
        throw new PatternUnsupported('a word boundary');
      case 'B':
      case 'c':
      case 'k':
      case 'p':
      case 'P':
        throw new PatternUnsupported(`the escape \\${c}`);
      default:
        if (/[1-9]/.test(c)) throw new PatternUnsupported('a back-reference');
        return inClass ? cp(c) : single(cp(c));
    }
  }

  private charClass(): RegexNode {
    const negated = this.peek() === '^';
    if (negated) this.i++;
    const ranges: Array<readonly [number, number]> = [];
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === undefined) throw new PatternUnsupported('an unclosed character class');
      if (c === ']' && !first) break;
      first = false;
      const lo = this.classAtom();
      if (typeof lo !== 'number') {
        ranges.push(...(lo as { ranges: Ranges }).ranges);
        continue;
      }
      if (this.peek() === '-' && this.src[this.i + 1] !== ']' && this.src[this.i + 1] !== undefined) {
        this.i++;
        const hi = this.classAtom();
        if (typeof hi !== 'number') throw new PatternUnsupported('a range ending in a class escape');
        if (hi < lo) throw new PatternUnsupported('a range out of order');
        ranges.push([lo, hi]);
      } else ranges.push([lo, lo]);
    }
    this.i++;
    return set(negated ? complement(ranges) : subtract(ranges, [SURROGATES]));
  }

  private classAtom(): number | { ranges: Ranges } {
    const c = this.src[this.i++]!;
    if (c !== '\\') {
      const v = cp(c);
      if (v > BMP_MAX) throw new PatternUnsupported('a character outside the Basic Multilingual Plane');
      return v;
    }
    const e = this.escape(true);
    return typeof e === 'number' ? e : { ranges: (e as { ranges: Ranges }).ranges };
  }
}

export function parsePattern(pattern: string): ParsedPattern {
  return new Parser(pattern).parse();
}

/** The shortest and longest strings a node matches (`Infinity` when unbounded). */
export function lengthRange(n: RegexNode): { readonly min: number; readonly max: number } {
  switch (n.kind) {
    case 'set':
      return { min: 1, max: 1 };
    case 'seq':
      return n.items
        .map(lengthRange)
        .reduce((a, b) => ({ min: a.min + b.min, max: a.max + b.max }), { min: 0, max: 0 });
    case 'alt': {
      const each = n.alts.map(lengthRange);
      return { min: Math.min(...each.map((e) => e.min)), max: Math.max(...each.map((e) => e.max)) };
    }
    case 'repeat': {
      const inner = lengthRange(n.node);
      return { min: inner.min * n.min, max: n.max === 0 ? 0 : inner.max * n.max };
    }
  }
}

/**
 * The node with every unbounded repeat given an upper bound, so that no string it matches is longer than
 * `maxLength`: the budget left after each repeat's minimum is shared evenly among them. A subset of the
 * strings, never a string the original refuses. Undefined when even the minimums exceed `maxLength`.
 */
export function capLength(n: RegexNode, maxLength: number): RegexNode | undefined {
  const unbounded: RegexNode[] = [];
  const walk = (x: RegexNode): void => {
    if (x.kind === 'repeat') {
      if (x.max === Infinity) unbounded.push(x);
      walk(x.node);
    } else if (x.kind === 'seq') x.items.forEach(walk);
    else if (x.kind === 'alt') x.alts.forEach(walk);
  };
  walk(n);
  const base = lengthRange(withUnboundedMax(n, (r) => r.min)).max;
  if (base > maxLength) return undefined;
  if (unbounded.length === 0) return n;
  // Each extra repetition of an unbounded repeat adds at most its inner node's longest string.
  const widths = unbounded.map((u) => lengthRange((u as Extract<RegexNode, { kind: 'repeat' }>).node).max);
  if (widths.some((w) => w === Infinity)) return undefined; // nested unbounded repeats: not worth sharing out
  const share = Math.floor((maxLength - base) / widths.reduce((a, b) => a + b, 0));
  const capped = withUnboundedMax(n, (r) => r.min + share);
  // A repeat inside a bounded repeat counts more than once: then the share was too generous.
  return lengthRange(capped).max <= maxLength ? capped : undefined;
}

/** The node with each unbounded repeat's maximum set by `max` (bounded repeats unchanged). */
function withUnboundedMax(n: RegexNode, max: (r: Extract<RegexNode, { kind: 'repeat' }>) => number): RegexNode {
  switch (n.kind) {
    case 'set':
      return n;
    case 'seq':
      return { ...n, items: n.items.map((x) => withUnboundedMax(x, max)) };
    case 'alt':
      return { ...n, alts: n.alts.map((x) => withUnboundedMax(x, max)) };
    case 'repeat':
      return { ...n, node: withUnboundedMax(n.node, max), max: n.max === Infinity ? max(n) : n.max };
  }
}
