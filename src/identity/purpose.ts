/**
 * Tokens with a purpose. A token the workflow accepts names what it may do (`purpose`), the run it acts on (`run`,
 * the workflow id) and, to approve or resolve, the call (`call`, the logical call id); its audience is the
 * issuer's (`aud`, e.g. `ledgerloop`), and it lives at most as long as its purpose allows:
 *
 *   purpose   bound to       longest lifetime (exp - iat)
 *   start     run            15 min  (a run verifies it at its opening, and again on a retried first turn)
 *   approve   run and call    5 min
 *   resolve   run and call    5 min
 *   cancel    run             5 min
 *   session   nothing        the issuer's maxLifetimeSec: proves who you are to whoever mints the four above
 *                            (your identity provider; in the demo the CLI, with the development issuer's key).
 *                            The workflow accepts it for nothing.
 *
 * Why binding and not a single-use `jti`: a binding is checked from the token and the request alone, the same on
 * every worker and on every retry, with no store to share, lose or erase. A token for one run and call cannot act
 * on another, and once its call is decided the call no longer waits for a decision; what is left is its short life.
 *
 * Pure (no Node built-ins): the purposes and the binding check are shared by the issuer, the verifier and the CLI.
 */

export const ACT_PURPOSES = ['start', 'approve', 'resolve', 'cancel'] as const;
export type ActPurpose = (typeof ACT_PURPOSES)[number];
export const SESSION_PURPOSE = 'session';
export type TokenPurpose = ActPurpose | typeof SESSION_PURPOSE;

/** The claim names. */
export const PURPOSE_CLAIM = 'purpose';
export const RUN_CLAIM = 'run';
export const CALL_CLAIM = 'call';

/** Longest lifetime (exp - iat, seconds) of a token for each act; an issuer's own `maxLifetimeSec` may be shorter. */
export const ACT_MAX_LIFETIME_SEC: Readonly<Record<ActPurpose, number>> = {
  start: 900,
  approve: 300,
  resolve: 300,
  cancel: 300,
};

/** What a token is presented for: an act on one run (and, to approve or resolve, one call). */
export interface TokenScope {
  readonly purpose: ActPurpose;
  readonly run: string;
  readonly call?: string;
}

export const isActPurpose = (v: unknown): v is ActPurpose =>
  typeof v === 'string' && (ACT_PURPOSES as readonly string[]).includes(v);

/** Whether an act names a call (approve, resolve) or only a run (start, cancel). */
export const actNamesCall = (p: ActPurpose): boolean => p === 'approve' || p === 'resolve';

/** Why a scope is malformed (a call missing or extra, an empty run), or undefined. */
export function scopeShapeError(s: { purpose: unknown; run?: unknown; call?: unknown }): string | undefined {
  if (!isActPurpose(s.purpose)) return `purpose must be one of ${ACT_PURPOSES.join(', ')}`;
  if (typeof s.run !== 'string' || s.run === '' || s.run.length > 1_000) return `a ${s.purpose} token names its run`;
  if (actNamesCall(s.purpose)) {
    if (typeof s.call !== 'string' || s.call === '' || s.call.length > 200)
      return `a ${s.purpose} token names its call`;
  } else if (s.call !== undefined) {
    return `a ${s.purpose} token names no call`;
  }
  return undefined;
}

/** The purpose, run and call a token's claims name (unverified values, as they are). */
export function claimedScope(claims: Readonly<Record<string, unknown>>): {
  purpose: unknown;
  run: unknown;
  call: unknown;
} {
  return { purpose: claims[PURPOSE_CLAIM], run: claims[RUN_CLAIM], call: claims[CALL_CLAIM] };
}

const describeScope = (s: { purpose: unknown; run?: unknown; call?: unknown }): string =>
  [
    `${typeof s.purpose === 'string' ? s.purpose.slice(0, 40) : 'no purpose'}`,
    typeof s.run === 'string' ? `on run ${s.run.slice(0, 200)}` : '',
    typeof s.call === 'string' ? `call ${s.call.slice(0, 100)}` : '',
  ]
    .filter((x) => x !== '')
    .join(' ');

/** Why a token's claims do not grant `expected`, or undefined when they name exactly that act, run and call. */
export function scopeMismatch(claims: Readonly<Record<string, unknown>>, expected: TokenScope): string | undefined {
  const got = claimedScope(claims);
  const want = describeScope(expected);
  if (got.purpose === undefined || got.purpose === SESSION_PURPOSE)
    return `the token names no act (${describeScope(got)}), not ${want}: a ${expected.purpose} token is needed`;
  if (got.purpose !== expected.purpose || got.run !== expected.run || got.call !== expected.call)
    return `the token is for ${describeScope(got)}, not ${want}`;
  return undefined;
}
