/**
 * The one depth limit on untrusted JSON (src/domain/json-depth.ts) and canonical JSON bounded by it: deep, wide and
 * cyclic-looking input is measured by loops and refused typed, never by a stack overflow; each refusal has its
 * positive control beside it.
 */
import { canonicalJson, CanonicalizationError, hashCanonical } from '../../src/domain/canonical';
import { MAX_JSON_DEPTH, measureDepth, textDepth, tooDeep, valueDepth } from '../../src/domain/json-depth';
import { checkRunInput } from '../../src/domain/run-input-check';

const nestedText = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;
const nested = (d: number): unknown => {
  let v: unknown = [];
  for (let i = 1; i < d; i++) v = [v];
  return v;
};
const nestedObject = (d: number): unknown => {
  let v: unknown = {};
  for (let i = 1; i < d; i++) v = { a: v };
  return v;
};

describe('textDepth measures JSON text by a loop', () => {
  test('1e5-deep text is measured as over the limit, and stops at the limit', () => {
    expect(textDepth(nestedText(100_000))).toBe(MAX_JSON_DEPTH + 1);
    expect(textDepth('{"a":'.repeat(100_000))).toBe(MAX_JSON_DEPTH + 1);
  });
  test('text at the limit measures its depth exactly (the positive control)', () => {
    expect(textDepth(nestedText(MAX_JSON_DEPTH))).toBe(MAX_JSON_DEPTH);
    expect(textDepth('{"a":[1,{"b":2}],"c":"x"}')).toBe(3);
    expect(textDepth('7')).toBe(0);
  });
  test('brackets inside strings, escaped quotes included, do not count', () => {
    expect(textDepth(JSON.stringify({ s: '['.repeat(1000) }))).toBe(1);
    expect(textDepth(JSON.stringify({ s: `\\"${'{'.repeat(1000)}` }))).toBe(1);
  });
});

describe('valueDepth measures values by a loop', () => {
  test('1e5-deep arrays and objects are over the limit', () => {
    expect(valueDepth(nested(100_000))).toBe(MAX_JSON_DEPTH + 1);
    expect(valueDepth(nestedObject(100_000))).toBe(MAX_JSON_DEPTH + 1);
  });
  test('a cycle is over any limit, and the walk ends', () => {
    const a: Record<string, unknown> = {};
    a['self'] = a;
    expect(valueDepth(a)).toBe(MAX_JSON_DEPTH + 1);
  });
  test('a value shared 2^60 ways along 60 levels is measured in linear time, and is within the limit', () => {
    let v: unknown = { leaf: 1 };
    for (let i = 0; i < 60; i++) v = [v, v];
    expect(valueDepth(v)).toBe(61);
  });
  test('wide values, long arrays and __proto__ keys are within the limit (the positive controls)', () => {
    expect(valueDepth(Array.from({ length: 100_000 }, (_, i) => ({ i })))).toBe(2);
    expect(valueDepth(JSON.parse('{"__proto__":{"polluted":[1]}}'))).toBe(3);
    expect(valueDepth(nested(MAX_JSON_DEPTH))).toBe(MAX_JSON_DEPTH);
    expect(valueDepth('text')).toBe(0);
  });
  test('a refusal names the field it is under and the limit', () => {
    expect(measureDepth({ planner: { vars: { x: nested(100) } } }).at).toBe('planner.vars.x[0]');
    expect(tooDeep({ planner: { vars: { x: nested(100) } } }, 'the run input')).toBe(
      `the run input nests deeper than ${MAX_JSON_DEPTH} levels (under planner.vars.x[0])`,
    );
    expect(tooDeep({ planner: { vars: { x: nested(10) } } }, 'the run input')).toBeUndefined();
  });
});

describe('canonical JSON is bounded by the limit', () => {
  test('a 1e5-deep value is refused Canonicalization.Invalid, not by a RangeError', () => {
    expect(() => canonicalJson(nested(100_000))).toThrow(CanonicalizationError);
    expect(() => hashCanonical(nestedObject(100_000))).toThrow(/nests deeper than 64 levels/);
  });
  test('a cycle is refused typed', () => {
    const a: unknown[] = [];
    a.push(a);
    expect(() => canonicalJson(a)).toThrow(CanonicalizationError);
  });
  test('a value at the limit canonicalizes (the positive control), one level more does not', () => {
    expect(canonicalJson(nested(MAX_JSON_DEPTH))).toBe(nestedText(MAX_JSON_DEPTH));
    expect(() => canonicalJson(nested(MAX_JSON_DEPTH + 1))).toThrow(CanonicalizationError);
  });
  test('what it refused before, it still refuses, and it canonicalizes as before', () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow('$.a: non-finite number');
    expect(() => canonicalJson({ a: undefined })).toThrow('$.a: undefined is not JSON');
    expect(() => canonicalJson([new Date(0)])).toThrow('$[0]: only plain objects are canonical (got Date)');
    expect(canonicalJson({ b: [1, { d: 2, c: 3 }], a: 'x' })).toBe('{"a":"x","b":[1,{"c":3,"d":2}]}');
  });
});

describe('the run input is checked for depth before anything walks it', () => {
  const input = {
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: 'g',
    strategy: 'same_key_replay',
    planner: { kind: 'scripted', scenario: 's', vars: {} as Record<string, unknown> },
    deadlineAt: '2030-01-01T00:00:00Z',
  };
  test('vars nested 1e5 deep are refused, naming the field and the limit', () => {
    const checked = checkRunInput({ ...input, planner: { ...input.planner, vars: { x: nested(100_000) } } });
    expect(checked).toEqual({
      ok: false,
      message: `the run input nests deeper than ${MAX_JSON_DEPTH} levels (under planner.vars.x[0]); nothing was run`,
    });
  });
  test('the same input with shallow vars passes (the positive control)', () => {
    expect(checkRunInput({ ...input, planner: { ...input.planner, vars: { x: nested(10) } } }).ok).toBe(true);
  });
});
