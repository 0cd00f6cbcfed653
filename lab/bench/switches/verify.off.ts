/**
 * Bench switch `identity` (off, in the worker process): stands in for src/identity/verify.ts. A run's token is not
 * verified: every token names the bench principal, as a loop that trusts its caller would assume. The client sends
 * a placeholder instead of a signed token (the attribution section), so the token's bytes leave the history too.
 * What stays: the run records the identity it was handed, and the opening still returns the policy.
 */
import type { TokenScope } from '../../../src/identity/purpose';
import type { IdentitySource } from '../../../src/identity/config';
import { Failure } from '../../../src/domain/failures';
import type { VerifiedIdentity } from '../../../src/domain/verified-identity';
import { IdentityError } from '../../../src/identity/verify';
import { PRINCIPAL, TENANT } from '../lib/principal';
import type { SwitchMark } from './marks';

export * from '../../../src/identity/verify';

const MARK: SwitchMark = 'ledgerloop-bench-switch:identity';

export async function verifyIdentityToken(
  _source: IdentitySource,
  token: unknown,
  _expected: TokenScope,
  nowMs: number = Date.now(),
): Promise<VerifiedIdentity> {
  if (typeof token !== 'string' || token === '') throw new IdentityError(Failure.IdentityInvalid, `${MARK}: no token`);
  return {
    subject: PRINCIPAL,
    issuer: MARK,
    principalId: PRINCIPAL,
    tenant: TENANT,
    roles: [],
    tokenDigest: '0'.repeat(64),
    expiresAt: new Date(nowMs + 15 * 60_000).toISOString(),
  };
}
