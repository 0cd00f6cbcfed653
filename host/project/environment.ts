/**
 * What a project config means for the processes Ledgerloop starts: the environment variables it implies (the
 * worker's task queue and services, the key files `ledgerloop keys` wrote, the envconfig profile, the model's
 * endpoint). A variable already set in the environment wins over the config, as `TEMPORAL_*` variables win over an
 * envconfig profile; a key file is named only once it exists, so a project without codec keys runs as before (and
 * is warned about tokens in clear text).
 *
 * Only paths and names go into the environment, never key material: a worker reads each key from its file.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ProjectConfig } from './config';

/** The variable a worker process reads its project config from (the fault runner's workers, `ledgerloop worker`). */
export const PROJECT_CONFIG_ENV = 'LEDGERLOOP_PROJECT_CONFIG';

type Env = Readonly<Record<string, string | undefined>>;

/** The variables `config` implies, by name (before the environment's own win). */
export function projectVariables(config: ProjectConfig, env: Env = process.env): Record<string, string> {
  const out: Record<string, string> = { [PROJECT_CONFIG_ENV]: config.file };
  const set = (name: string, value: string | undefined): void => {
    if (value !== undefined) out[name] = value;
  };
  const file = (name: string, p: string): void => set(name, existsSync(p) ? p : undefined);
  set('LEDGERLOOP_TASK_QUEUE', config.taskQueue);
  set(
    'LEDGERLOOP_SERVICES',
    JSON.stringify(Object.fromEntries(Object.entries(config.services).map(([n, s]) => [n, s.url]))),
  );
  if (config.policy !== undefined && 'file' in config.policy) set('LEDGERLOOP_POLICY_FILE', config.policy.file);
  file('LEDGERLOOP_CAPABILITY_SIGNING_KEY', config.keys.signingKey);
  file('LEDGERLOOP_CAPABILITY_KEYS', config.keys.jwks);
  file('LEDGERLOOP_IDENTITY_ISSUERS', config.keys.identityIssuers);
  file('LEDGERLOOP_DEV_ISSUER_KEY', config.keys.devIssuerKey);
  // Codec keys inline in the environment win over any file: only name the file when neither is set.
  if (!env['LEDGERLOOP_CODEC_KEYS']) file('LEDGERLOOP_CODEC_KEYS_FILE', config.keys.codecKeys);
  set('TEMPORAL_CONFIG_FILE', config.connection.configFile);
  set('TEMPORAL_PROFILE', config.connection.profile);
  set('TEMPORAL_ADDRESS', config.connection.address);
  set('TEMPORAL_NAMESPACE', config.connection.namespace);
  for (const m of config.models) {
    if (m.kind !== 'openai') continue;
    set('OPENAI_BASE_URL', m.baseUrl);
    set('LEDGERLOOP_OPENAI_MODEL', m.model);
    if (m.apiKeyEnv !== undefined) set('OPENAI_API_KEY', env[m.apiKeyEnv] || undefined);
    // The model's transcripts belong to the project, not to the package's folder.
    set('LEDGERLOOP_TRANSCRIPT_DB', path.join(config.root, '.ledgerloop', 'transcripts.db'));
  }
  return out;
}

/** Sets in `env` each variable `config` implies that `env` does not already set; returns the names it set. */
export function applyProjectEnvironment(config: ProjectConfig, env: NodeJS.ProcessEnv = process.env): string[] {
  const applied: string[] = [];
  for (const [name, value] of Object.entries(projectVariables(config, env))) {
    if (env[name] !== undefined && env[name] !== '') continue;
    env[name] = value;
    applied.push(name);
  }
  return applied;
}
