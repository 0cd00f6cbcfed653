/**
 * A recognizer for the GBNF the local model's grammar compiler writes (packages/local-model/src/grammar.ts), so
 * the unit tests can ask of a grammar what llama.cpp would let a model write under it: does this text belong to
 * it? Rules one per line (`name ::= body`), literals, character classes (ranges, `^`, `\x`/`\u` escapes),
 * references, groups, `|`, and the postfixes `? * + {m} {m,} {m,n}`. Independent of the compiler: it reads
 * the text.
 */
type Node =
  | { readonly k: 'lit'; readonly text: string }
  | { readonly k: 'class'; readonly negated: boolean; readonly ranges: ReadonlyArray<readonly [number, number]> }
  | { readonly k: 'ref'; readonly name: string }
  | { readonly k: 'seq'; readonly items: readonly Node[] }
  | { readonly k: 'alt'; readonly alts: readonly Node[] }
  | { readonly k: 'rep'; readonly node: Node; readonly min: number; readonly max: number };

class Reader {
  i = 0;
  constructor(readonly s: string) {}
  ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i]!)) this.i++;
  }
  fail(what: string): never {
    throw new Error(
      `gbnf: ${what} at ${this.i} in ${JSON.stringify(this.s.slice(Math.max(0, this.i - 20), this.i + 20))}`,
    );
  }
  char(): number {
    const c = this.s[this.i++];
    if (c === undefined) this.fail('unexpected end');
    if (c !== '\\') return c.codePointAt(0)!;
    const e = this.s[this.i++];
    const hex = (n: number): number => {
      const h = this.s.slice(this.i, this.i + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(h)) this.fail('bad escape');
      this.i += n;
      return parseInt(h, 16);
    };
    switch (e) {
      case 'x':
        return hex(2);
      case 'u':
        return hex(4);
      case 'U':
        return hex(8);
      case 'n':
        return 10;
      case 't':
        return 9;
      case 'r':
        return 13;
      default:
        return e!.codePointAt(0)!;
    }
  }
}

function parseAlt(r: Reader): Node {
  const alts: Node[] = [parseSeq(r)];
  r.ws();
  while (r.s[r.i] === '|') {
    r.i++;
    alts.push(parseSeq(r));
    r.ws();
  }
  return alts.length === 1 ? alts[0]! : { k: 'alt', alts };
}

function parseSeq(r: Reader): Node {
  const items: Node[] = [];
  for (;;) {
    r.ws();
    const c = r.s[r.i];
    if (c === undefined || c === '|' || c === ')') break;
    let node: Node;
    if (c === '"') {
      r.i++;
      let text = '';
      while (r.s[r.i] !== '"') text += String.fromCodePoint(r.char());
      r.i++;
      node = { k: 'lit', text };
    } else if (c === '[') {
      r.i++;
      const negated = r.s[r.i] === '^';
      if (negated) r.i++;
      const ranges: Array<[number, number]> = [];
      while (r.s[r.i] !== ']') {
        const lo = r.char();
        if (r.s[r.i] === '-' && r.s[r.i + 1] !== ']') {
          r.i++;
          ranges.push([lo, r.char()]);
        } else ranges.push([lo, lo]);
      }
      r.i++;
      node = { k: 'class', negated, ranges };
    } else if (c === '(') {
      r.i++;
      node = parseAlt(r);
      r.ws();
      if (r.s[r.i] !== ')') r.fail('expected )');
      r.i++;
    } else {
      const m = /^[a-zA-Z0-9-]+/.exec(r.s.slice(r.i));
      if (!m) r.fail(`unexpected ${c}`);
      r.i += m[0].length;
      node = { k: 'ref', name: m[0] };
    }
    for (;;) {
      const p = r.s[r.i];
      if (p === '?') node = { k: 'rep', node, min: 0, max: 1 };
      else if (p === '*') node = { k: 'rep', node, min: 0, max: Infinity };
      else if (p === '+') node = { k: 'rep', node, min: 1, max: Infinity };
      else if (p === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(r.s.slice(r.i));
        if (!m) r.fail('bad {m,n}');
        const min = Number(m[1]);
        node = { k: 'rep', node, min, max: m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]) };
        r.i += m[0].length - 1;
      } else break;
      r.i++;
    }
    items.push(node);
  }
  return items.length === 1 ? items[0]! : { k: 'seq', items };
}

export interface Grammar {
  readonly rules: ReadonlyMap<string, Node>;
  /** Whether the whole text is derived from `root`. */
  accepts(text: string): boolean;
  /** A random text derived from `root` (unbounded repeats stop after a few; deep recursion takes a way out). */
  sample(random: () => number): string;
}

export function parseGbnf(gbnf: string): Grammar {
  const rules = new Map<string, Node>();
  for (const line of gbnf.split('\n')) {
    if (line.trim() === '') continue;
    const m = /^([a-zA-Z0-9-]+) ::= (.*)$/.exec(line);
    if (!m) throw new Error(`gbnf: not a rule: ${line}`);
    if (rules.has(m[1]!)) throw new Error(`gbnf: rule ${m[1]} defined twice`);
    const r = new Reader(m[2]!);
    rules.set(m[1]!, parseAlt(r));
    r.ws();
    if (r.i !== r.s.length) r.fail('trailing text');
  }
  const refs = (n: Node): string[] =>
    n.k === 'ref'
      ? [n.name]
      : n.k === 'seq'
        ? n.items.flatMap(refs)
        : n.k === 'alt'
          ? n.alts.flatMap(refs)
          : n.k === 'rep'
            ? refs(n.node)
            : [];
  for (const [name, body] of rules)
    for (const ref of refs(body)) if (!rules.has(ref)) throw new Error(`gbnf: ${name} refers to an undefined ${ref}`);
  if (!rules.has('root')) throw new Error('gbnf: no root rule');

  return {
    rules,
    accepts(text: string): boolean {
      const chars = [...text].map((c) => c.codePointAt(0)!);
      const memo = new Map<string, Set<number>>();
      const ends = (n: Node, at: number): Set<number> => {
        switch (n.k) {
          case 'lit': {
            const lit = [...n.text].map((c) => c.codePointAt(0)!);
            return lit.every((c, j) => chars[at + j] === c) ? new Set([at + lit.length]) : new Set();
          }
          case 'class': {
            const c = chars[at];
            if (c === undefined) return new Set();
            const inside = n.ranges.some(([a, b]) => a <= c && c <= b);
            return inside !== n.negated ? new Set([at + 1]) : new Set();
          }
          case 'ref': {
            const key = `${n.name}@${at}`;
            let got = memo.get(key);
            if (!got) {
              memo.set(key, new Set()); // no left recursion in these grammars
              got = ends(rules.get(n.name)!, at);
              memo.set(key, got);
            }
            return got;
          }
          case 'seq': {
            let cur = new Set([at]);
            for (const item of n.items) {
              const next = new Set<number>();
              for (const p of cur) for (const e of ends(item, p)) next.add(e);
              cur = next;
              if (cur.size === 0) break;
            }
            return cur;
          }
          case 'alt': {
            const out = new Set<number>();
            for (const a of n.alts) for (const e of ends(a, at)) out.add(e);
            return out;
          }
          case 'rep': {
            const out = new Set<number>();
            let cur = new Set([at]);
            const seen = new Set<number>();
            for (let count = 0; cur.size > 0 && count <= n.max; count++) {
              if (count >= n.min) for (const p of cur) out.add(p);
              if (count === n.max) break;
              const next = new Set<number>();
              for (const p of cur) for (const e of ends(n.node, p)) if (count < n.min || !seen.has(e)) next.add(e);
              if (count >= n.min) for (const p of cur) seen.add(p);
              cur = next;
            }
            return out;
          }
        }
      };
      return ends(rules.get('root')!, 0).has(chars.length);
    },
    sample(random: () => number): string {
      const pick = (n: number): number => Math.floor(random() * n);
      const hasRef = (n: Node): boolean =>
        n.k === 'ref' ||
        (n.k === 'seq' && n.items.some(hasRef)) ||
        (n.k === 'alt' && n.alts.some(hasRef)) ||
        (n.k === 'rep' && n.min > 0 && hasRef(n.node));
      const gen = (n: Node, depth: number): string => {
        switch (n.k) {
          case 'lit':
            return n.text;
          case 'class': {
            // Printable ASCII most of the time, so the samples stay readable; any member otherwise.
            const members = n.negated ? [[0x20, 0x7e] as const] : n.ranges;
            const [a, b] = members[pick(members.length)]!;
            const ascii = [Math.max(a, 0x20), Math.min(b, 0x7e)] as const;
            const [lo, hi] = ascii[0] <= ascii[1] && random() < 0.9 ? ascii : [a, b];
            for (let t = 0; t < 100; t++) {
              const c = lo + pick(hi - lo + 1);
              const inside = n.ranges.some(([x, y]) => x <= c && c <= y);
              if (inside !== n.negated) return String.fromCodePoint(c);
            }
            throw new Error('gbnf: could not sample a class');
          }
          case 'ref':
            return gen(rules.get(n.name)!, depth + 1);
          case 'seq':
            return n.items.map((i) => gen(i, depth)).join('');
          case 'alt': {
            const ways = depth > 12 ? n.alts.filter((a) => !hasRef(a)) : n.alts;
            const from = ways.length > 0 ? ways : n.alts;
            return gen(from[pick(from.length)]!, depth);
          }
          case 'rep': {
            const top = n.max === Infinity ? n.min + (depth > 12 ? 0 : 3) : n.max;
            const times = n.min + pick(top - n.min + 1);
            return Array.from({ length: times }, () => gen(n.node, depth)).join('');
          }
        }
      };
      return gen(rules.get('root')!, 0);
    },
  };
}
