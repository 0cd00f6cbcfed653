import { canonicalJson, CanonicalizationError, hashCanonical, sha256Hex } from '../../src/domain/canonical';

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
});
