/** Principal ids are identities: one normal form, and every spelling that could pass for another refused. */
import { checkExactId, normalisePrincipalId, principalsDiffer, PrincipalIdError } from '../../src/domain/principal-id';

const CYRILLIC_A = '\u0430'; // "а", looks like the Latin "a"
const CYRILLIC_ES = '\u0441'; // "с", looks like the Latin "c"

test.each([
  ['already normal', 'user:alice', 'user:alice'],
  ['upper case folds (one rule for case)', 'User:ALICE', 'user:alice'],
  ['full-width letters fold (NFKC)', 'user:\uff41lice', 'user:alice'],
  ['a composed and a decomposed "é" are one principal', 'user:re\u0301mi', 'user:r\u00e9mi'],
  ['one script per segment is fine (Cyrillic name)', `user:${CYRILLIC_A}\u043b\u0438\u0441\u0430`, 'user:алиса'],
])('normalised: %s', (_name, raw, normal) => {
  expect(normalisePrincipalId(raw)).toBe(normal);
  // Idempotent: the normal form is its own normal form.
  expect(normalisePrincipalId(normal)).toBe(normal);
});

test.each([
  ['a leading space', ' user:alice', /U\+0020/],
  ['a trailing space', 'user:alice ', /U\+0020/],
  ['a no-break space', 'user:\u00a0alice', /U\+00A0/],
  ['a zero-width space', 'user:al\u200bice', /U\+200B/],
  ['a zero-width joiner', 'user:alice\u200d', /U\+200D/],
  ['a soft hyphen', 'user:al\u00adice', /U\+00AD/],
  ['a right-to-left override', 'user:\u202ealice', /U\+202E/],
  ['a control character', 'user:alice\u0007', /U\+0007/],
  ['a newline', 'user:alice\nadmin', /U\+000A/],
  ['a private-use character', 'user:alice\ue000', /U\+E000/],
  ['a Cyrillic "а" among Latin letters', `user:${CYRILLIC_A}lice`, /mixes/],
  ['a Cyrillic "с" among Latin letters', `user:ali${CYRILLIC_ES}e`, /mixes/],
  ['a Greek omicron among Latin letters', 'user:b\u03bfb', /mixes/],
  ['empty', '', /missing/],
  ['not a string', 42, /missing/],
  ['too long', `user:${'a'.repeat(300)}`, /1 to 200/],
])('refused: %s', (_name, raw, why) => {
  expect(() => normalisePrincipalId(raw)).toThrow(PrincipalIdError);
  expect(() => normalisePrincipalId(raw)).toThrow(why);
});

test('tenants and subjects are checked, never changed: a spelling NFKC would change is refused', () => {
  expect(checkExactId('tenant', 'acme')).toBe('acme');
  expect(checkExactId('subject', 'Alice-1234')).toBe('Alice-1234'); // a subject's case is its issuer's
  expect(() => checkExactId('tenant', '\uff41cme')).toThrow(/NFKC/);
  expect(() => checkExactId('subject', 'user:alice\u200b')).toThrow(/U\+200B/);
  expect(() => checkExactId('tenant', ' acme')).toThrow(/U\+0020/);
});

test('principalsDiffer is true only for two valid principals with different normal forms', () => {
  expect(principalsDiffer('manager:carol', 'user:alice')).toBe(true);
  expect(principalsDiffer('User:Alice', 'user:alice')).toBe(false);
  // An id that names no one for certain is never "another principal": a self-check refuses it (fail closed).
  expect(principalsDiffer(`user:${CYRILLIC_A}lice`, 'user:alice')).toBe(false);
  expect(principalsDiffer('user:alice\u200b', 'user:alice')).toBe(false);
});
