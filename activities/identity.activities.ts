/**
 * `verifyIdentity`: checks an identity token against the worker's configured issuers (public keys only) and
 * returns who it names, with the token's SHA-256 digest. Refusals are non-retryable typed failures
 * (`Identity.Invalid`, `Identity.Unmapped`, `Identity.Unconfigured`): no retry can change them.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { identitySourceFromEnv, type IdentitySource } from '../src/identity/config';
import type { VerifiedIdentity } from '../src/identity/types';
import { IdentityError, verifyIdentityToken } from '../src/identity/verify';

export interface IdentityDeps {
  /** The issuers; default LEDGERLOOP_IDENTITY_ISSUERS (read at each verification; unset refuses every token). */
  readonly issuers?: IdentitySource;
}

export function createIdentityActivities(deps: IdentityDeps | undefined) {
  const source = deps?.issuers ?? identitySourceFromEnv();
  async function verifyIdentity(input: { readonly token?: string }): Promise<VerifiedIdentity> {
    try {
      return await verifyIdentityToken(source, input.token);
    } catch (err) {
      if (err instanceof IdentityError)
        throw ApplicationFailure.create({ type: err.type, nonRetryable: true, message: err.message });
      throw err;
    }
  }
  return { verifyIdentity };
}
