/**
 * Every secret file the compose deployment mounts, written by lab/compose-secrets.ts (mode 0600; owned by the
 * containers' user when run as root): the payload keys, the capability signing keys, and, for a trial without an
 * identity provider, a development issuer with tokens for the workers, an admin and the demo's alice (starter),
 * carol (approver) and bob (operator). Prints the public lines for .env (the services' capability key set).
 *
 *   node -r tsx/cjs scripts/gen-compose-secrets.ts [DIR] >> .env      # DIR default .data/compose
 *
 * Run it again to mint the trial tokens again (they live 24 h): each file is rewritten in place, so the running
 * containers read the new ones. Existing payload and capability keys are kept (delete them to rotate).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureCodecKeysFile, writeCapabilityKeys, writeTrialIdentity } from '../lab/compose-secrets';
import { KEY_SET_ENV } from '../src/capability/capability-keys';
import { REPO_ROOT } from '../host/server/temporal-binaries';

async function main(): Promise<void> {
  const dir = path.resolve(process.argv[2] ?? path.join(REPO_ROOT, '.data', 'compose'));
  const secrets = path.join(dir, 'secrets');
  const written = [ensureCodecKeysFile(path.join(dir, 'codec-keys'))];
  if (!fs.existsSync(path.join(secrets, 'capability-signing-key.json'))) {
    const { publicJwks, files } = writeCapabilityKeys(secrets);
    fs.writeFileSync(path.join(dir, 'capability-keys.public.json'), `${publicJwks}\n`, { mode: 0o644 });
    written.push(...files);
  }
  written.push(...(await writeTrialIdentity(dir)));
  for (const f of written) process.stderr.write(`gen-compose-secrets: ${path.relative(process.cwd(), f) || f}\n`);
  const publicJwks = fs.readFileSync(path.join(dir, 'capability-keys.public.json'), 'utf8').trim();
  console.log(`${KEY_SET_ENV}='${publicJwks}'`);
}

main().catch((err: unknown) => {
  process.stderr.write(`gen-compose-secrets: ${(err as Error).message}\n`);
  process.exit(1);
});
