/**
 * Principal ids are identities, not strings: one normal form, checked where a token is minted and where it is
 * verified, so that `User:alice`, ` user:alice`, `user:alice\u200b` and `user:аlice` (a Cyrillic "а") can never
 * pass for someone other than who they spell.
 *
 * The rule, for a principal id:
 *   1. NFKC (compatibility forms fold: a full-width "ａ" is "a", a no-break space is a space);
 *   2. nothing invisible or ambiguous: no whitespace, no control (Cc), format (Cf: zero-width space and joiners,
 *      soft hyphen, bidi marks, BOM), private-use, surrogate or unassigned code point;
 *   3. one rule for case: lower case (Unicode's default mapping, no locale), then NFKC again;
 *   4. no segment (between `:`) mixes Latin, Cyrillic and Greek letters: the three scripts whose letters look
 *      alike. `user:алиса` is one principal; `user:аlice` is refused.
 * 1 to 200 characters after normalising. A tenant and a token subject follow rules 1, 2 and 4 and must already be in
 * that form (they are compared exactly, so they are refused rather than changed; their case is theirs).
 *
 * Pure (no Node built-ins): workflow code uses it to compare principals.
 */

export const MAX_PRINCIPAL_ID = 200;

/** A principal id, tenant or subject that cannot be normalised; the message names the rule, not a secret. */
export class PrincipalIdError extends Error {
  override readonly name = 'PrincipalIdError';
}

// Whitespace (any Unicode White_Space, which covers Zs, Zl, Zp), control, format, private use, surrogates, unassigned.
const INVISIBLE = /[\p{White_Space}\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}]/u;
const LATIN = /\p{Script=Latin}/u;
const CYRILLIC = /\p{Script=Cyrillic}/u;
const GREEK = /\p{Script=Greek}/u;

function describe(cp: number): string {
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Why `s` breaks rules 2 and 4, or undefined. */
function offence(s: string): string | undefined {
  for (const ch of s) {
    if (INVISIBLE.test(ch)) return `contains ${describe(ch.codePointAt(0)!)} (whitespace, control or format character)`;
  }
  for (const segment of s.split(':')) {
    const scripts = [LATIN, CYRILLIC, GREEK].filter((re) => re.test(segment)).length;
    if (scripts > 1) return 'mixes Latin, Cyrillic or Greek letters in one segment';
  }
  return undefined;
}

function checked(what: string, raw: unknown, normal: (s: string) => string): string {
  if (typeof raw !== 'string' || raw === '') throw new PrincipalIdError(`the ${what} is missing`);
  if (raw.length > MAX_PRINCIPAL_ID * 4) throw new PrincipalIdError(`the ${what} is too long`);
  const s = normal(raw);
  if (s.length === 0 || s.length > MAX_PRINCIPAL_ID)
    throw new PrincipalIdError(`the ${what} must be 1 to ${MAX_PRINCIPAL_ID} characters`);
  const why = offence(raw) ?? offence(s);
  if (why !== undefined) throw new PrincipalIdError(`the ${what} ${why}`);
  return s;
}

/** The normal form of a principal id (rules 1 to 4), or a `PrincipalIdError`. Idempotent. */
export function normalisePrincipalId(raw: unknown): string {
  return checked('principal id', raw, (s) => s.normalize('NFKC').toLowerCase().normalize('NFKC'));
}

/**
 * A tenant or a token subject, checked (rules 1, 2 and 4) and returned unchanged: one that NFKC would change is
 * refused, so two spellings of one name never both pass.
 */
export function checkExactId(what: 'tenant' | 'subject', raw: unknown): string {
  const s = checked(what, raw, (x) => x);
  if (s.normalize('NFKC') !== s) throw new PrincipalIdError(`the ${what} is not in Unicode normal form NFKC`);
  return s;
}

/**
 * Whether two principal ids certainly name different principals: both valid, and their normal forms differ. An id
 * that cannot be normalised names no one for certain, so this is false (fail closed: a check for "not the run's
 * own principal" refuses it).
 */
export function principalsDiffer(a: string, b: string): boolean {
  try {
    return normalisePrincipalId(a) !== normalisePrincipalId(b);
  } catch {
    return false;
  }
}
