/**
 * Fresh capability keys: the workers' and the relay's Ed25519 signing keys are written to files (mode 0600, in
 * OUT_DIR, default .data/compose/secrets), and only the services' public key set is printed, as a .env line.
 *
 *   node -r tsx/cjs scripts/gen-capability-keys.ts [OUT_DIR] >> .env
 *
 * Point the signers at the files (LEDGERLOOP_CAPABILITY_SIGNING_KEY and LEDGERLOOP_RELAY_SIGNING_KEY take a path;
 * compose mounts the first as a secret). A private key never goes to .env or to an environment variable.
 *
 * Rotation: run it again into a new folder, ADD the new public key to LEDGERLOOP_CAPABILITY_KEYS next to the old
 * one, deploy the services, then the workers with the new signing key, and remove the old public key once its
 * tokens expired.
 */
import path from 'node:path';
import { writeCapabilityKeys } from '../lab/compose-secrets';
import { KEY_SET_ENV } from '../src/capability/capability-keys';
import { REPO_ROOT } from '../host/server/temporal-binaries';

const dir = path.resolve(process.argv[2] ?? path.join(REPO_ROOT, '.data', 'compose', 'secrets'));
const { publicJwks, files } = writeCapabilityKeys(dir);
for (const f of files) process.stderr.write(`gen-capability-keys: wrote ${f} (0600)\n`);
console.log(`${KEY_SET_ENV}='${publicJwks}'`);
