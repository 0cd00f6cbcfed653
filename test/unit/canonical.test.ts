import canonicalize from 'canonicalize';
import { canonicalJson, CanonicalizationError, hashCanonical, sha256Hex } from '../../src/domain/canonical';
import { MAX_JSON_DEPTH } from '../../src/domain/json-depth';
// A seeded generator (mulberry32): the same values on every run.
import { prng as random } from '../../lab/bench/lib/stats';

const AWKWARD = [
  '',
  'a',
  'A',
  'é',
  'z',
  '\u0000',
  '\u001f',
  '"',
  '\\',
  '\u2028',
  '\ud83d\ude00',
  '\ufb33',
  '10',
  '1',
  'ö',
  '\ud800',
];
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.1,
  1e21,
  1e-7,
  123456789012345680000,
  5e-324,
  Number.MAX_VALUE,
  -1.5e300,
  2 ** 53,
  333.3333,
];

function text(r: () => number): string {
  let out = '';
  for (let n = Math.floor(r() * 4); n > 0; n--) out += AWKWARD[Math.floor(r() * AWKWARD.length)];
  return out;
}

function value(r: () => number, depth: number): unknown {
  const pick = r();
  if (depth <= 0 || pick < 0.35) {
    const k = Math.floor(r() * 5);
    if (k === 0) return null;
    if (k === 1) return r() < 0.5;
    if (k === 2) return NUMBERS[Math.floor(r() * NUMBERS.length)]! * (r() < 0.5 ? 1 : r());
    return text(r);
  }
  if (pick < 0.6) return Array.from({ length: Math.floor(r() * 5) }, () => value(r, depth - 1));
  const o: Record<string, unknown> = r() < 0.2 ? Object.create(null) : {};
  for (let n = Math.floor(r() * 6); n > 0; n--) o[text(r)] = value(r, depth - 1);
  return o;
}

describe('canonical JSON (RFC 8785) and SHA-256', () => {
  test('key order does not change the canonical text or the hash', () => {
    const a = { tenant: 'acme', amount: { currency: 'EUR', minor: 1250 }, account: 'acct_1' };
    const b = { account: 'acct_1', amount: { minor: 1250, currency: 'EUR' }, tenant: 'acme' };
    expect(canonicalJson(a)).toBe('{"account":"acct_1","amount":{"currency":"EUR","minor":1250},"tenant":"acme"}');
    expect(hashCanonical(a)).toBe(hashCanonical(b));
  });

  test('numbers serialize as RFC 8785 prescribes', () => {
    expect(canonicalJson([1.0, 1e21, 0.000001, -0])).toBe('[1,1e+21,0.000001,0]');
  });

  test('a different amount gives a different hash', () => {
    expect(hashCanonical({ minor: 1250 })).not.toBe(hashCanonical({ minor: 1251 }));
  });

  test('SHA-256 matches the standard test vector', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  test.each([
    ['NaN', { x: Number.NaN }],
    ['Infinity', { x: Number.POSITIVE_INFINITY }],
    ['undefined member', { x: undefined }],
    ['a Date', { at: new Date(0) }],
    ['a function', { f: () => 1 }],
  ])('rejects %s with a typed error', (_name, value) => {
    expect(() => canonicalJson(value)).toThrow(CanonicalizationError);
  });

  test("writes the text the RFC author's canonicalize writes, on 5,000 generated values", () => {
    const r = random(44);
    for (let i = 0; i < 5_000; i++) {
      const v = value(r, 5);
      expect([i, canonicalJson(v)]).toEqual([i, canonicalize(v)]);
    }
  });

  test('a generated value with one member changed has another text (the comparison can fail)', () => {
    const v = { a: [1, { b: 'x' }], c: null };
    expect(canonicalJson({ ...v, c: 0 })).not.toBe(canonicalJson(v));
    expect(canonicalJson(v)).toBe(canonicalize(v));
  });

  test.each([
    ['the first bad value in member order', { b: { c: [1, Number.NaN] }, a: 'fine' }, '$.b.c[1]: non-finite number'],
    [
      'an undefined member before any member is walked',
      { x: { y: Number.NaN }, z: undefined },
      '$.z: undefined is not JSON',
    ],
    ['an array hole', { list: [1, , 3] }, '$.list[1]: undefined is not JSON'],
    ['a class instance', { at: [new Date(0)] }, '$.at[0]: only plain objects are canonical (got Date)'],
    ['a function', { f: () => 1 }, '$.f: function is not JSON'],
    ['a bigint at the root', 1n, '$: bigint is not JSON'],
  ])('refuses %s, naming its path', (_name, v, message) => {
    expect(() => canonicalJson(v)).toThrow(new CanonicalizationError(message));
  });

  test('refuses a value nested deeper than MAX_JSON_DEPTH, and writes one exactly that deep', () => {
    const nest = (n: number): unknown => {
      let v: unknown = 0;
      for (let i = 0; i < n; i++) v = [v];
      return v;
    };
    expect(canonicalJson(nest(MAX_JSON_DEPTH))).toBe(canonicalize(nest(MAX_JSON_DEPTH)));
    expect(() => canonicalJson(nest(MAX_JSON_DEPTH + 1))).toThrow(/nests deeper than 64 levels/);
    // Far past any stack: refused, typed, without recursing into it.
    expect(() => canonicalJson(nest(100_000))).toThrow(CanonicalizationError);
  });
});
