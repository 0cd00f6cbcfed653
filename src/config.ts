/**
 * One validated configuration: every environment variable Ledgerloop reads, with its type, the processes that read
 * it and whether it is a secret, as one zod schema over the environment.
 *
 * - `readConfig(env)` checks them all at once (a worker does this before it connects) and throws `ConfigError`,
 *   whose message names each wrong variable and what it must be. A secret's value is never repeated in a message.
 * - `configValue(name, env)` reads one variable through the same schema, for a module that needs only that one.
 * - An empty value counts as unset, as shells and compose files write "unset".
 *
 * The Temporal connection (`TEMPORAL_*`) is read by `@temporalio/envconfig` (host/server/connection-config.ts), not
 * here. What a value means beyond its shape (a key's format, a file's content) is checked where it is used: the
 * codec, the capability keys and the identity issuers throw their own typed errors.
 *
 * Runs outside the workflow sandbox only: workflow code never reads the environment.
 */
import { z } from 'zod';

/** Where a variable is read, for the docs and for `ledgerloop worker --help`. */
type Reader = 'workers' | 'clients' | 'CLI' | 'services' | 'codec server' | 'relay' | 'lab';

interface Variable<S extends z.ZodType<unknown, string>> {
  readonly schema: S;
  readonly readBy: readonly Reader[];
  /** A secret's value never appears in an error message. */
  readonly secret?: true;
}

const text = z.string().min(1, 'a non-empty string');

const wholeNumber = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().min(min, `a whole number from ${min} to ${max}`).max(max, `a whole number from ${min} to ${max}`));

/** A switch that guards something unsafe: on only when exactly `1`; any other value leaves it off. */
const onlyExactlyOne = z.string().transform((v) => v === '1');

/** A convenience switch: `1`/`true`/`yes` on, `0`/`false`/`no` off, any case. */
const looseSwitch = z
  .string()
  .transform((v) => v.trim().toLowerCase())
  .pipe(z.enum(['1', 'true', 'yes', '0', 'false', 'no'], { error: '1, true or yes (on), or 0, false or no (off)' }))
  .transform((v) => v === '1' || v === 'true' || v === 'yes');

const url = z.url({ error: 'an absolute URL' });

/** `{"wallet":"http://…", …}`: each downstream service's base URL, by service name. */
const serviceMap = z
  .string()
  .transform((raw, ctx) => {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'JSON like {"wallet":"http://127.0.0.1:4100"}' });
      return z.NEVER;
    }
  })
  .pipe(
    z.record(z.string().regex(/^[a-z][a-z0-9_-]*$/, 'service names in lower case'), url, {
      error: 'a JSON object of service name to URL',
    }),
  );

const tracingMode = z
  .string()
  .transform((v) => v.trim().toLowerCase())
  .pipe(z.enum(['off', 'none', '0', 'false', 'console', 'otlp'], { error: 'off, console or otlp' }))
  .transform((v) => (v === 'console' || v === 'otlp' ? v : 'off'));

const logLevel = z
  .string()
  .transform((v) => v.trim().toUpperCase())
  .pipe(
    z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'OFF'], { error: 'trace, debug, info, warn, error or off' }),
  );

const v = <S extends z.ZodType<unknown, string>>(schema: S, readBy: readonly Reader[], secret?: true): Variable<S> => ({
  schema,
  readBy,
  ...(secret ? { secret } : {}),
});

/** Every variable, by name. Add one here and it is validated, typed and listed. */
export const CONFIG_VARIABLES = {
  // Workers.
  LEDGERLOOP_TASK_QUEUE: v(text, ['workers', 'CLI']),
  LEDGERLOOP_SERVICES: v(serviceMap, ['workers']),
  LEDGERLOOP_WALLET_URL: v(url, ['workers']),
  LEDGERLOOP_WORKFLOW_BUNDLE: v(text, ['workers']),
  LEDGERLOOP_PLANNER_LOG: v(text, ['workers']),
  LEDGERLOOP_MAX_CACHED_WORKFLOWS: v(wholeNumber(0, 1_000_000), ['workers']),
  LEDGERLOOP_MAX_CONCURRENT_ACTIVITIES: v(wholeNumber(1, 100_000), ['workers']),
  LEDGERLOOP_STICKY_TIMEOUT_MS: v(wholeNumber(1, 86_400_000), ['workers']),
  LEDGERLOOP_DEPLOYMENT: v(text, ['workers']),
  LEDGERLOOP_BUILD_ID: v(text, ['workers']),
  LEDGERLOOP_SCRIPTED_MODEL: v(onlyExactlyOne, ['workers']),
  LEDGERLOOP_POLICY_FILE: v(text, ['workers']),
  /** A project config (host/project/config.ts): the worker serves that project's tools, model and policy. */
  LEDGERLOOP_PROJECT_CONFIG: v(text, ['workers', 'CLI']),
  LEDGERLOOP_IDENTITY_ISSUERS: v(text, ['workers']),
  LEDGERLOOP_CAPABILITY_SIGNING_KEY: v(text, ['workers'], true),
  LEDGERLOOP_CAPABILITY_SIGNING_KID: v(text, ['workers']),
  LEDGERLOOP_TRANSCRIPT_URL: v(text, ['workers'], true),
  LEDGERLOOP_TRANSCRIPT_DB: v(text, ['workers']),
  LEDGERLOOP_QUOTA_URL: v(text, ['workers'], true),
  LEDGERLOOP_QUOTA_DB: v(text, ['workers']),
  LEDGERLOOP_OPENAI_MODEL: v(text, ['workers']),
  OPENAI_API_KEY: v(text, ['workers'], true),
  OPENAI_BASE_URL: v(url, ['workers']),
  LEDGERLOOP_LOG_LEVEL: v(logLevel, ['workers', 'services']),
  LEDGERLOOP_LOG_FORMAT: v(z.enum(['json', 'text'], { error: 'json or text' }), ['workers', 'services']),
  // Clients, workers and the codec server.
  LEDGERLOOP_CODEC_KEYS: v(text, ['clients', 'workers', 'codec server'], true),
  LEDGERLOOP_CODEC_KEY_ID: v(text, ['clients', 'workers', 'codec server']),
  LEDGERLOOP_CODEC_KEYS_FILE: v(text, ['clients', 'workers', 'codec server']),
  LEDGERLOOP_CODEC_STRICT: v(looseSwitch, ['clients', 'workers']),
  LEDGERLOOP_CODEC_TOKEN: v(text, ['codec server'], true),
  LEDGERLOOP_CODEC_TOKEN_FILE: v(text, ['codec server']),
  LEDGERLOOP_CODEC_CORS_ORIGINS: v(text, ['codec server']),
  LEDGERLOOP_CODEC_ALLOWED_HOSTS: v(text, ['codec server']),
  LEDGERLOOP_CODEC_ENABLE_ENCODE: v(looseSwitch, ['codec server']),
  LEDGERLOOP_TRACING: v(tracingMode, ['clients', 'workers']),
  /** The identity token for a Temporal frontend that authorizes (host/server/connection-config.ts): a file path. */
  LEDGERLOOP_TEMPORAL_TOKEN_FILE: v(text, ['clients', 'workers', 'CLI']),
  // The CLI.
  LEDGERLOOP_IDENTITY_TOKEN: v(text, ['CLI'], true),
  LEDGERLOOP_ACTOR_TOKEN: v(text, ['CLI'], true),
  /** The development issuer's private key file: the CLI mints act tokens from a session token (src/identity/act-token.ts). */
  LEDGERLOOP_DEV_ISSUER_KEY: v(text, ['CLI']),
  // Services and the relay.
  LEDGERLOOP_CAPABILITY_KEYS: v(text, ['services']),
  LEDGERLOOP_CAPABILITY_SKEW_MS: v(wholeNumber(0, 3_600_000), ['services']),
  LEDGERLOOP_RELAY_SIGNING_KEY: v(text, ['relay'], true),
  LEDGERLOOP_ADMIN_PORT: v(wholeNumber(0, 65_535), ['services', 'relay']),
  LEDGERLOOP_ADMIN_TOKEN: v(text, ['services', 'relay'], true),
  /** Retired: its presence is refused with a message saying what replaced it (src/capability/capability-keys.ts). */
  LEDGERLOOP_CAPABILITY_KEY: v(text, ['workers', 'services'], true),
  // The lab.
  LEDGERLOOP_TARGET: v(z.enum(['dev', 'cluster'], { error: 'dev or cluster' }), ['lab']),
  LEDGERLOOP_CLUSTER_PORT_OFFSET: v(wholeNumber(0, 64_000), ['lab']),
  LEDGERLOOP_TEST_WORKERS: v(wholeNumber(1, 16), ['lab']),
  LEDGERLOOP_TEST_BUDGET_MS: v(wholeNumber(1_000, 24 * 3_600_000), ['lab']),
} as const;

export type ConfigName = keyof typeof CONFIG_VARIABLES;
/** The configuration, typed: each variable's parsed value, or undefined when it is unset. */
export type Config = {
  readonly [K in ConfigName]?: z.output<(typeof CONFIG_VARIABLES)[K]['schema']>;
};

type Env = Readonly<Record<string, string | undefined>>;

/** One wrong variable: its name and what it must be. */
export interface ConfigProblem {
  readonly variable: ConfigName;
  readonly expected: string;
}

/** Some variables have values of the wrong shape. The message names each of them; no secret is repeated. */
export class ConfigError extends Error {
  readonly code = 'Config.Invalid';
  constructor(
    readonly problems: readonly ConfigProblem[],
    env: Env,
  ) {
    super(
      `invalid configuration: ${problems
        .map(({ variable, expected }) => `${variable} must be ${expected}${shown(variable, env[variable])}`)
        .join('; ')}`,
    );
    this.name = 'ConfigError';
  }
}

function shown(name: ConfigName, value: string | undefined): string {
  if (value === undefined) return '';
  if (CONFIG_VARIABLES[name].secret) return ' (its value is a secret and is not shown)';
  return ` (got ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)})`;
}

/** The zod schema over the whole environment: every variable optional, empty meaning unset. */
export const configSchema = z.object(
  Object.fromEntries(Object.entries(CONFIG_VARIABLES).map(([name, { schema }]) => [name, schema.optional()])) as {
    [K in ConfigName]: z.ZodOptional<(typeof CONFIG_VARIABLES)[K]['schema']>;
  },
);

function present(env: Env, names: readonly ConfigName[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') out[name] = value;
  }
  return out;
}

const ALL_NAMES = Object.keys(CONFIG_VARIABLES) as ConfigName[];

function problemsOf(error: z.ZodError): ConfigProblem[] {
  const seen = new Map<ConfigName, string>();
  for (const issue of error.issues) {
    const name = issue.path[0] as ConfigName;
    if (!seen.has(name)) seen.set(name, issue.message);
  }
  return [...seen].map(([variable, expected]) => ({ variable, expected }));
}

/** Checks every variable; throws ConfigError naming each wrong one. */
export function readConfig(env: Env = process.env): Config {
  const parsed = configSchema.safeParse(present(env, ALL_NAMES));
  if (!parsed.success) throw new ConfigError(problemsOf(parsed.error), env);
  return parsed.data as Config;
}

/** One variable through the same schema; undefined when unset or empty, ConfigError when wrong. */
export function configValue<K extends ConfigName>(name: K, env: Env = process.env): Config[K] {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const parsed = CONFIG_VARIABLES[name].schema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError([{ variable: name, expected: parsed.error.issues[0]?.message ?? 'valid' }], env);
  }
  return parsed.data as Config[K];
}

/** The variables each reader takes, for docs and help texts. */
export function variablesReadBy(reader: Reader): ConfigName[] {
  return ALL_NAMES.filter((name) => CONFIG_VARIABLES[name].readBy.includes(reader));
}
