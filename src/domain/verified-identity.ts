/**
 * Verified identities: what a run, an approver, an operator or a canceller is once its token has been checked.
 * Pure types and shape checks: imported by workflow code (no Node built-ins, no `jose`).
 */

/** Who a verified token names. Never contains the token; `tokenDigest` is SHA-256 (hex) of it. */
export interface VerifiedIdentity {
  /** The token's `sub`. */
  readonly subject: string;
  /** The token's `iss`, one of the worker's configured issuers. */
  readonly issuer: string;
  /** The principal the issuer's mapping gives the subject, e.g. `user:alice`. */
  readonly principalId: string;
  readonly tenant: string;
  readonly roles: readonly string[];
  /** SHA-256 of the compact token, hex: names the credential in the ledger without carrying it. */
  readonly tokenDigest: string;
  /** The token's `exp`, ISO 8601. */
  readonly expiresAt: string;
}

/** What the ledger records about a verified actor (approver, operator, canceller). */
export interface ActorRecord {
  readonly principalId: string;
  readonly subject: string;
  readonly issuer: string;
  readonly tokenDigest: string;
}

export const actorRecord = (v: VerifiedIdentity): ActorRecord => ({
  principalId: v.principalId,
  subject: v.subject,
  issuer: v.issuer,
  tokenDigest: v.tokenDigest,
});

/** Longest accepted compact token (characters). An Ed25519 JWS with a few claims is about 400. */
export const MAX_TOKEN_CHARS = 8_192;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The shape check every validator makes before a token reaches the verifying activity. */
export function isTokenShaped(v: unknown): v is string {
  return typeof v === 'string' && v.length <= MAX_TOKEN_CHARS && COMPACT_JWS.test(v);
}

/**
 * Why a verified identity cannot open a run for `principal`, or `undefined` when it names that principal in that
 * tenant. One sentence for the workflow's check and the planner activity's, so both refuse in the same words.
 */
export function principalMismatch(
  identity: Pick<VerifiedIdentity, 'principalId' | 'tenant'>,
  principal: { readonly id: string; readonly tenant: string },
): string | undefined {
  return identity.principalId === principal.id && identity.tenant === principal.tenant
    ? undefined
    : `the token names ${identity.principalId} (${identity.tenant}), the input ${principal.id} (${principal.tenant})`;
}
