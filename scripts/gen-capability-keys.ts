/**
 * Prints fresh capability keys as .env lines: the workers' Ed25519 signing key (a private JWK with its kid) and
 * the services' key set (a JWKS with its public half, plus the outbox relay's key restricted to the event scope).
 *
 *   node -r tsx/cjs scripts/gen-capability-keys.ts >> .env
 *
 * Rotation: run it again, ADD the new public key to LEDGERLOOP_CAPABILITY_KEYS next to the old one, deploy the
 * services, then the workers with the new signing key, and remove the old public key once its tokens expired.
 */
import {
  generateCapabilityTrust,
  KEY_SET_ENV,
  RELAY_SIGNING_KEY_ENV,
  SIGNING_KEY_ENV,
} from '../src/policy/capability-keys';

const trust = generateCapabilityTrust();
const q = (v: string) => `'${v}'`;
console.log(`${SIGNING_KEY_ENV}=${q(trust.workerEnv[SIGNING_KEY_ENV]!)}`);
console.log(`${RELAY_SIGNING_KEY_ENV}=${q(trust.relayEnv[RELAY_SIGNING_KEY_ENV]!)}`);
console.log(`${KEY_SET_ENV}=${q(trust.serviceEnv[KEY_SET_ENV]!)}`);
