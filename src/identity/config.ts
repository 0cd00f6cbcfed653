/**
 * The worker's identity issuers (LEDGERLOOP_IDENTITY_ISSUERS = path of a JSON file). One issuer object or a list:
 *
 * {
 *   "issuer": "https://id.example.com",         // the token's `iss` must equal it
 *   "audience": "ledgerloop",                   // the token's `aud` must name it
 *   "jwks": { "keys": [ { "kty": "OKP", "crv": "Ed25519", "x": "...", "kid": "2026-11" } ] },  // public keys only
 *   "mapping": "subjects",                      // or "claims"
 *   "subjects": { "alice": { "principal": "user:alice", "tenant": "acme", "roles": [] } },
 *   "maxLifetimeSec": 3600                      // tokens valid longer than this (exp - iat) are refused
 * }
 *
 * `mapping: "subjects"` (the default) maps each `sub` through `subjects`; a subject not listed is refused.
 * `mapping: "claims"` takes `principal`, `tenant` and `roles` from the signed claims (the issuer is trusted to
 * assert them; the demo's development issuer uses it).
 */
import fs from 'node:fs';
import { z } from 'zod';
import { configValue } from '../config';
import { checkExactId, normalisePrincipalId, PrincipalIdError } from '../domain/principal-id';

export const IDENTITY_ISSUERS_ENV = 'LEDGERLOOP_IDENTITY_ISSUERS';

const Jwk = z
  .object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: z.string().min(1), kid: z.string().min(1) })
  .passthrough()
  .refine((k) => !('d' in k), 'an issuer key set holds public keys only (found a private key `d`)');

const SubjectMapping = z
  .object({
    principal: z.string().min(1).max(200),
    tenant: z.string().min(1).max(200),
    roles: z.array(z.string().min(1).max(100)).max(50).default([]),
  })
  .strict();

export const IssuerConfig = z
  .object({
    issuer: z.string().min(1),
    audience: z.string().min(1),
    jwks: z.object({ keys: z.array(Jwk).min(1) }).strict(),
    mapping: z.enum(['subjects', 'claims']).default('subjects'),
    subjects: z.record(z.string(), SubjectMapping).default({}),
    maxLifetimeSec: z
      .number()
      .int()
      .positive()
      .max(7 * 86_400)
      .default(86_400),
  })
  .strict();
export type IssuerConfig = z.infer<typeof IssuerConfig>;

export type IdentityConfig = readonly IssuerConfig[];

export class IdentityConfigError extends Error {
  override readonly name = 'IdentityConfigError';
}

export function parseIdentityConfig(json: unknown): IdentityConfig {
  // One issuer object, or a list of them.
  const parsed = Array.isArray(json)
    ? z.array(IssuerConfig).min(1).safeParse(json)
    : IssuerConfig.transform((i) => [i]).safeParse(json);
  if (!parsed.success)
    throw new IdentityConfigError(
      `identity issuers invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  // Principals are identities (src/domain/principal-id.ts): a mapping that names one no token could is refused.
  for (const issuer of parsed.data) {
    for (const [sub, m] of Object.entries(issuer.subjects)) {
      try {
        checkExactId('subject', sub);
        checkExactId('tenant', m.tenant);
        if (normalisePrincipalId(m.principal) !== m.principal)
          throw new PrincipalIdError(
            `the principal id is not in its normal form (${normalisePrincipalId(m.principal)})`,
          );
      } catch (err) {
        if (!(err instanceof PrincipalIdError)) throw err;
        throw new IdentityConfigError(
          `identity issuers invalid: ${issuer.issuer} subject ${sub.slice(0, 100)}: ${err.message}`,
        );
      }
    }
  }
  const names = parsed.data.map((i) => i.issuer);
  if (new Set(names).size !== names.length)
    throw new IdentityConfigError('identity issuers invalid: two issuers share an `issuer`');
  return parsed.data;
}

export function loadIdentityConfig(file: string): IdentityConfig {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new IdentityConfigError(`identity issuers unreadable (${file}): ${(err as Error).message}`);
  }
  try {
    return parseIdentityConfig(JSON.parse(text));
  } catch (err) {
    if (err instanceof IdentityConfigError) throw err;
    throw new IdentityConfigError(`identity issuers are not JSON (${file})`);
  }
}

/**
 * Where the worker's issuers come from. The file is read at each verification, so a rotated key set takes effect
 * without a restart; a missing or invalid file refuses every token (fail closed).
 */
export interface IdentitySource {
  current(): IdentityConfig;
}

export function identitySourceFromEnv(env: NodeJS.ProcessEnv = process.env): IdentitySource {
  const file = configValue('LEDGERLOOP_IDENTITY_ISSUERS', env);
  return {
    current() {
      if (!file)
        throw new IdentityConfigError(
          `no identity issuers configured (${IDENTITY_ISSUERS_ENV} is not set): every token is refused`,
        );
      return loadIdentityConfig(file);
    },
  };
}

export const staticIdentitySource = (config: IdentityConfig): IdentitySource => ({ current: () => config });
