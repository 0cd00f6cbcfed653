/**
 * The project config: one file in a user's project that tells every `ledgerloop` command where the project's
 * pieces are, so `worker`, `start`, `show`, `replay`, `faults` and `keys` work on the project's own tools.
 *
 *   // ledgerloop.config.mjs
 *   export default {
 *     tools: './src/tools/workflow-tools.js',            // exports workflowTools (ledgerloop/tool-registry)
 *     model: { kind: 'scripted', scenarios: './src/scenarios.js' },   // exports scenarios
 *     policy: './policy.json',                             // or the policy document itself
 *     services: { booking: { url: 'http://127.0.0.1:4300', main: './src/service/main.js' } },
 *     taskQueue: 'booking',
 *     keys: { dir: '.ledgerloop/keys' },                   // what `ledgerloop keys` writes
 *     connection: { profile: 'default' },                  // a Temporal envconfig profile
 *   };
 *
 * Files, in the order they are looked for (the first one found in the working directory or a parent wins, or
 * `--config <path>`): `ledgerloop.config.mjs`, `.js`, `.cjs`, `.json`, `.ts`. A `.ts` config needs a TypeScript
 * loader already active in the process (tsx, or this repository's `bin/register.cjs`); without one it is refused
 * with a `ProjectConfigError` saying what to do. The CLI itself needs no loader.
 *
 * Every relative path is resolved against the config file's folder. A config that does not validate is a
 * `ProjectConfigError` naming the file and each wrong field; nothing has started. Secrets never live in the
 * config: it names files (keys, written 0600 by `ledgerloop keys`) and environment variables (an API key).
 *
 * Node side only (CLI, worker processes).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import Module from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { Policy } from '../../src/domain/policy-format';

/** The file names searched for, in order. */
export const CONFIG_FILE_NAMES = [
  'ledgerloop.config.mjs',
  'ledgerloop.config.js',
  'ledgerloop.config.cjs',
  'ledgerloop.config.json',
  'ledgerloop.config.ts',
] as const;

/** Where `ledgerloop keys` writes, relative to the config's folder, unless `keys.dir` says otherwise. */
export const DEFAULT_KEYS_DIR = '.ledgerloop/keys';

/** The files `ledgerloop keys` writes in the keys folder (secrets with mode 0600). */
export const KEY_FILES = {
  /** The capability signing key (private Ed25519 JWK with kid): the workers'. Secret. */
  signingKey: 'signing-key.json',
  /** The public key set the services verify capabilities with, the current key and those still trusted. */
  jwks: 'jwks.json',
  /** The development identity issuer (public keys): the workers verify run principals with it. */
  identityIssuers: 'issuer.json',
  /** The development issuer's private key: the CLI mints act tokens with it. Secret. */
  devIssuerKey: 'issuer-key.json',
  /** The payload codec keys, `kid:base64,...` (LEDGERLOOP_CODEC_KEYS format), the active one last. Secret. */
  codecKeys: 'codec-keys',
} as const;

export type KeyFileName = keyof typeof KEY_FILES;

/** One wrong field of a config file. */
export interface ProjectConfigIssue {
  /** e.g. `model.scenarios`, or `(file)` when the file itself cannot be read. */
  readonly field: string;
  readonly message: string;
}

/** The project config cannot be found, read or used. The message names the file and every wrong field. */
export class ProjectConfigError extends Error {
  override readonly name = 'ProjectConfigError';
  readonly code = 'Config.Project';
  constructor(
    /** The config file (absolute), or the folder searched when none was found. */
    readonly file: string,
    readonly issues: readonly ProjectConfigIssue[],
  ) {
    super(
      issues.length === 1
        ? `${file}: ${describeIssue(issues[0]!)}`
        : `${file} is not a valid ledgerloop config: ${issues.map(describeIssue).join('; ')}`,
    );
  }
}

function describeIssue(i: ProjectConfigIssue): string {
  return i.field === '(file)' ? i.message : `${i.field}: ${i.message}`;
}

const text = z.string().trim().min(1, 'must be a non-empty string');
const relPath = z.string().trim().min(1, 'must be a path (relative to the config file)');
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });
const serviceName = z.string().regex(/^[a-z][a-z0-9_-]*$/, 'service names are lower case: [a-z][a-z0-9_-]*');
const envName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'must be an environment variable name (A-Z, 0-9, _)');
const hostPort = z.string().regex(/^[A-Za-z0-9.\-_[\]:]+:\d{1,5}$/, 'must be host:port');

const ScriptedModel = z.strictObject({
  kind: z.literal('scripted'),
  /** A module exporting `scenarios` (or a default export): scenario name to `Scenario`. */
  scenarios: relPath,
});

const OpenAIModel = z.strictObject({
  kind: z.literal('openai'),
  /** An OpenAI-compatible endpoint, e.g. a local server `http://127.0.0.1:8080/v1`; default OPENAI_BASE_URL / OpenAI. */
  baseUrl: httpUrl.optional(),
  /** The model runs without their own `planner.model` use; default LEDGERLOOP_OPENAI_MODEL. */
  model: text.optional(),
  /** The environment variable holding the API key (never the key itself); default OPENAI_API_KEY. */
  apiKeyEnv: envName.optional(),
});

const ModelConfig = z.discriminatedUnion('kind', [ScriptedModel, OpenAIModel], {
  error: 'must be { kind: "scripted", scenarios } or { kind: "openai", baseUrl?, model?, apiKeyEnv? }',
});

/**
 * A value of one of two shapes, chosen by its type (a string or an object, an object or a list), so that an
 * error names the field inside the shape it has instead of zod's "Invalid input" for a union.
 */
function byShape<A extends z.ZodType, B extends z.ZodType>(
  first: { readonly is: (v: unknown) => boolean; readonly schema: A },
  second: { readonly is: (v: unknown) => boolean; readonly schema: B },
  expected: string,
) {
  return z.unknown().transform((value, ctx): z.output<A> | z.output<B> => {
    const schema = first.is(value) ? first.schema : second.is(value) ? second.schema : undefined;
    if (schema === undefined) {
      ctx.addIssue({ code: 'custom', message: value === undefined ? `required: ${expected}` : expected });
      return z.NEVER;
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data as z.output<A> | z.output<B>;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom', path: [...issue.path] });
    return z.NEVER;
  });
}

const isObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);

const ModelField = byShape(
  { is: isObject, schema: ModelConfig },
  { is: Array.isArray, schema: z.array(ModelConfig).min(1, 'must name at least one model') },
  'must be a model ({ kind: "scripted", scenarios } or { kind: "openai", ... }) or a list of them',
);

const ServiceConfig = byShape(
  { is: (v) => typeof v === 'string', schema: httpUrl },
  {
    is: isObject,
    schema: z.strictObject({
      url: httpUrl,
      /** The service's process entry (it calls `runServiceMain` from ledgerloop/services): `faults` starts it. */
      main: relPath.optional(),
    }),
  },
  'must be a URL or { url, main? }',
);

const KeysConfig = z.strictObject({
  dir: relPath.optional(),
  signingKey: relPath.optional(),
  jwks: relPath.optional(),
  identityIssuers: relPath.optional(),
  devIssuerKey: relPath.optional(),
  codecKeys: relPath.optional(),
});

const ConnectionConfig = z.strictObject({
  /** The envconfig profile (TEMPORAL_PROFILE wins); default `default`. */
  profile: text.optional(),
  /** The envconfig TOML file (TEMPORAL_CONFIG_FILE wins); default the user's temporal.toml. */
  configFile: relPath.optional(),
  /** host:port over the profile's (TEMPORAL_ADDRESS and --address win). */
  address: hostPort.optional(),
  namespace: text.optional(),
});

/**
 * The fenced local outbox (src/downstream/outbox): which tools' sends are claimed in it, and the environment variable
 * (a worker secret) holding its database's URL, never the URL itself (it holds a password).
 */
const OutboxSchema = z.strictObject({
  /** The `http` or `function` tools whose sends go through the outbox (at least one, each once). */
  tools: z
    .array(text)
    .min(1, 'must name at least one tool')
    .refine((t) => new Set(t).size === t.length, 'names a tool twice'),
  /** The environment variable holding the PostgreSQL URL (`postgres://…`), read by the worker at start. */
  urlEnv: envName,
  /** The table (a plain identifier); default `ledgerloop_outbox`. */
  table: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a plain identifier: [a-z_][a-z0-9_]*, at most 63 characters')
    .optional(),
});

/** The schema of a config file, as written. */
export const ProjectConfigSchema = z.strictObject({
  /** The tools module (exports `workflowTools`, a ToolRegistry from ledgerloop/tool-registry). */
  tools: relPath,
  /** The function tools' implementations: a module exporting `functions` (`implementTool` from ledgerloop/worker). */
  functions: relPath.optional(),
  /** The worker's MCP servers: a module exporting `servers` (name to `McpServerConfig` of ledgerloop/mcp). */
  mcp: relPath.optional(),
  /** The model, or models (one per planner kind). */
  model: ModelField,
  /** A policy file (JSON) or the policy document; default the built-in policy (which allows no tool of yours). */
  policy: z.union([relPath, Policy]).optional(),
  /** The downstream services by name, as the tools' `service` names them. */
  services: z.record(serviceName, ServiceConfig),
  /** The task queue workers poll and runs start on; default `ledgerloop`. */
  taskQueue: text.optional(),
  keys: KeysConfig.optional(),
  connection: ConnectionConfig.optional(),
  outbox: OutboxSchema.optional(),
});

/** A model as a config names it. */
export type ModelConfig =
  | {
      readonly kind: 'scripted';
      /** A module exporting `scenarios` (or a default export): scenario name to `Scenario`. */
      readonly scenarios: string;
    }
  | {
      readonly kind: 'openai';
      /** An OpenAI-compatible endpoint (a local server: `http://127.0.0.1:8080/v1`); default OPENAI_BASE_URL. */
      readonly baseUrl?: string;
      /** The model for runs that name none; default LEDGERLOOP_OPENAI_MODEL. */
      readonly model?: string;
      /** The environment variable holding the API key (never the key itself); default OPENAI_API_KEY. */
      readonly apiKeyEnv?: string;
    };

/** The fenced local outbox as a config declares it: its tools, and where the worker finds its database. */
export interface OutboxConfig {
  /** The `http` or `function` tools (on downstreams that take no fence) whose every send is claimed in the outbox. */
  readonly tools: readonly string[];
  /**
   * The environment variable holding the outbox database's PostgreSQL URL, read by each worker at start (a worker
   * secret: never the URL itself, which holds a password). A variable unset there refuses the start.
   */
  readonly urlEnv: string;
  /** The table; default `ledgerloop_outbox` (create it with `PgOutbox.createTable()` or `outboxDdl()`). */
  readonly table?: string;
}

/** A config as written in `ledgerloop.config.*`; relative paths are relative to the config file. */
export interface LedgerloopConfig {
  /** The tools module: exports `workflowTools`, a ToolRegistry (ledgerloop/tool-registry). */
  readonly tools: string;
  /**
   * The module of the function tools' implementations (exports `functions`, a list of `implementTool(...)`), loaded
   * by the worker only (it does I/O; the tools module is bundled into the workflow). Default none.
   */
  readonly functions?: string;
  /**
   * The module of the worker's MCP servers: it exports `servers` (server name to `McpServerConfig` of ledgerloop/mcp,
   * the name the tool set's `server` gives) and may export `options` (`McpServersOptions`). The worker starts them
   * and closes them on shutdown; `ledgerloop faults` puts its harness in front of a stdio server. Default none.
   */
  readonly mcp?: string;
  /** The model, or one model per planner kind. */
  readonly model: ModelConfig | readonly ModelConfig[];
  /** A policy file (JSON), or the policy document; default the built-in policy, which allows none of your tools. */
  readonly policy?: string | z.input<typeof Policy>;
  /** Each downstream service by the name the tools give it: its URL, and the process entry `faults` starts. */
  readonly services: Readonly<Record<string, string | { readonly url: string; readonly main?: string }>>;
  /** The task queue workers poll and runs start on; default `ledgerloop`. */
  readonly taskQueue?: string;
  /** Where `ledgerloop keys` writes (`dir`, default `.ledgerloop/keys`), or any key file on its own. */
  readonly keys?: { readonly dir?: string } & { readonly [K in KeyFileName]?: string };
  /** The Temporal connection: an envconfig profile (TEMPORAL_* variables win), or an address and namespace. */
  readonly connection?: {
    readonly profile?: string;
    readonly configFile?: string;
    readonly address?: string;
    readonly namespace?: string;
  };
  /** The fenced local outbox: tools whose sends are claimed under the attempt's fence first. Default none. */
  readonly outbox?: OutboxConfig;
}

/** Types a config file's object (`export default defineConfig({...})`); returns it unchanged. */
export function defineConfig(config: LedgerloopConfig): LedgerloopConfig {
  return config;
}

export type ProjectModel =
  | { readonly kind: 'scripted'; readonly scenarios: string }
  | { readonly kind: 'openai'; readonly baseUrl?: string; readonly model?: string; readonly apiKeyEnv?: string };

export interface ProjectService {
  readonly url: string;
  /** Absolute path of the service's process entry, when the config names one. */
  readonly main?: string;
}

/** A validated config with every path absolute. */
export interface ProjectConfig {
  /** The config file (absolute). */
  readonly file: string;
  /** Its folder: the project's root. */
  readonly root: string;
  readonly tools: string;
  /** The function tools' implementations module (absolute), when the config names one. */
  readonly functions?: string;
  /** The MCP servers module (absolute), when the config names one. */
  readonly mcp?: string;
  readonly models: readonly ProjectModel[];
  /** A policy file (absolute) or the checked document; undefined: the built-in policy. */
  readonly policy?: { readonly file: string } | { readonly document: Policy };
  readonly services: Readonly<Record<string, ProjectService>>;
  readonly taskQueue?: string;
  /** The keys folder and each key file in it (absolute; a file need not exist yet). */
  readonly keys: { readonly dir: string } & { readonly [K in KeyFileName]: string };
  readonly connection: {
    readonly profile?: string;
    readonly configFile?: string;
    readonly address?: string;
    readonly namespace?: string;
  };
  /** The fenced local outbox, when the config declares one. */
  readonly outbox?: OutboxConfig;
}

function issuesOf(error: z.ZodError): ProjectConfigIssue[] {
  return error.issues.map((i) => {
    const keys = i.code === 'unrecognized_keys' ? i.keys : [];
    const at = keys.length === 1 ? [...i.path, keys[0] as string] : i.path;
    const field = at.map((p, n) => (typeof p === 'number' ? `[${p}]` : `${n > 0 ? '.' : ''}${String(p)}`)).join('');
    const message =
      i.code === 'unrecognized_keys'
        ? keys.length === 1
          ? 'unknown field'
          : `unknown fields ${keys.join(', ')}`
        : i.code === 'invalid_key'
          ? (i.issues[0]?.message ?? i.message)
          : i.message;
    return { field: field || '(root)', message };
  });
}

/** Validates a config object (as a config file exports it) and resolves its paths against `file`'s folder. */
export function parseProjectConfig(raw: unknown, file: string): ProjectConfig {
  const absolute = path.resolve(file);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ProjectConfigError(absolute, [
      { field: '(root)', message: 'must export an object (export default { tools, model, services, ... })' },
    ]);
  }
  const parsed = ProjectConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ProjectConfigError(absolute, issuesOf(parsed.error));
  const c = parsed.data;
  const root = path.dirname(absolute);
  const at = (p: string): string => path.resolve(root, p);
  const models = (Array.isArray(c.model) ? c.model : [c.model]).map((m): ProjectModel =>
    m.kind === 'scripted' ? { kind: 'scripted', scenarios: at(m.scenarios) } : m,
  );
  const kinds = models.map((m) => m.kind);
  const twice = kinds.find((k, i) => kinds.indexOf(k) !== i);
  if (twice !== undefined)
    throw new ProjectConfigError(absolute, [{ field: 'model', message: `names the ${twice} model twice` }]);
  const keysDir = at(c.keys?.dir ?? DEFAULT_KEYS_DIR);
  const keyFile = (name: KeyFileName): string => {
    const given = c.keys?.[name];
    return given === undefined ? path.join(keysDir, KEY_FILES[name]) : at(given);
  };
  return {
    file: absolute,
    root,
    tools: at(c.tools),
    ...(c.functions === undefined ? {} : { functions: at(c.functions) }),
    ...(c.mcp === undefined ? {} : { mcp: at(c.mcp) }),
    models,
    ...(c.policy === undefined
      ? {}
      : { policy: typeof c.policy === 'string' ? { file: at(c.policy) } : { document: c.policy } }),
    services: Object.fromEntries(
      Object.entries(c.services).map(([name, s]) => [
        name,
        typeof s === 'string' ? { url: s } : { url: s.url, ...(s.main === undefined ? {} : { main: at(s.main) }) },
      ]),
    ),
    ...(c.taskQueue === undefined ? {} : { taskQueue: c.taskQueue }),
    keys: {
      dir: keysDir,
      signingKey: keyFile('signingKey'),
      jwks: keyFile('jwks'),
      identityIssuers: keyFile('identityIssuers'),
      devIssuerKey: keyFile('devIssuerKey'),
      codecKeys: keyFile('codecKeys'),
    },
    connection: {
      ...(c.connection?.profile === undefined ? {} : { profile: c.connection.profile }),
      ...(c.connection?.configFile === undefined ? {} : { configFile: at(c.connection.configFile) }),
      ...(c.connection?.address === undefined ? {} : { address: c.connection.address }),
      ...(c.connection?.namespace === undefined ? {} : { namespace: c.connection.namespace }),
    },
    ...(c.outbox === undefined ? {} : { outbox: c.outbox }),
  };
}

/** The config file in `dir` or the nearest parent, or undefined when there is none up to the root. */
export function findConfigFile(dir: string = process.cwd()): string | undefined {
  let at = path.resolve(dir);
  for (;;) {
    for (const name of CONFIG_FILE_NAMES) {
      const candidate = path.join(at, name);
      if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
    }
    const parent = path.dirname(at);
    if (parent === at) return undefined;
    at = parent;
  }
}

/** Whether this process can load TypeScript: a CommonJS `.ts` hook (tsx, bin/register.cjs) or Node's own. */
export function typeScriptLoaderActive(): boolean {
  const extensions = (Module as unknown as { _extensions: Record<string, unknown> })._extensions;
  return extensions['.ts'] !== undefined || (process.features as { typescript?: unknown }).typescript !== undefined;
}

/**
 * `import()` kept as a real dynamic import whatever this file is compiled to: a TypeScript or esbuild build to
 * CommonJS would turn `import()` into `require()`, which cannot load an ES module on every Node 20.
 */
const dynamicImport = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<unknown>;

/**
 * Loads a module of the user's project (the config, the scenarios module): `.cjs`, and `.ts` under a loader,
 * with `require`; `.mjs` and `.js` with `import()` (a `.js` of either module kind). Returns its exports; a
 * default export (or `module.exports`) is what most modules give. Throws what loading throws.
 */
export async function loadUserModule(file: string): Promise<Record<string, unknown>> {
  const ext = path.extname(file);
  if (ext === '.cjs' || ext === '.ts' || ext === '.cts' || ext === '.mts') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a path known at run time
    return require(file) as Record<string, unknown>;
  }
  // Under a CommonJS loader (this repository, tsx/cjs) a `.js` of a CommonJS package loads with require too;
  // import() would load it again, outside the require cache, as another instance.
  if (ext === '.js' && typeScriptLoaderActive() && !isModulePackage(path.dirname(file))) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a path known at run time
    return require(file) as Record<string, unknown>;
  }
  return (await dynamicImport(pathToFileURL(file).href)) as Record<string, unknown>;
}

function isModulePackage(dir: string): boolean {
  for (let at = dir; ; at = path.dirname(at)) {
    const pkg = path.join(at, 'package.json');
    if (existsSync(pkg)) {
      try {
        return (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type === 'module';
      } catch {
        return false;
      }
    }
    if (path.dirname(at) === at) return false;
  }
}

/** The object a config module exports: its default export, else the module itself. */
function exportedConfig(mod: Record<string, unknown>): unknown {
  return 'default' in mod ? mod['default'] : mod;
}

/** Reads and validates one config file. */
export async function readProjectConfig(file: string): Promise<ProjectConfig> {
  const absolute = path.resolve(file);
  if (!existsSync(absolute)) throw new ProjectConfigError(absolute, [{ field: '(file)', message: 'no such file' }]);
  const ext = path.extname(absolute);
  let raw: unknown;
  if (ext === '.json') {
    let textOf: string;
    try {
      textOf = readFileSync(absolute, 'utf8');
    } catch (err) {
      throw new ProjectConfigError(absolute, [{ field: '(file)', message: `cannot read: ${(err as Error).message}` }]);
    }
    try {
      raw = JSON.parse(textOf);
    } catch (err) {
      throw new ProjectConfigError(absolute, [{ field: '(file)', message: `not JSON: ${(err as Error).message}` }]);
    }
  } else if (['.mjs', '.js', '.cjs', '.ts', '.mts', '.cts'].includes(ext)) {
    if (ext.endsWith('ts') && !typeScriptLoaderActive()) {
      throw new ProjectConfigError(absolute, [
        {
          field: '(file)',
          message: `a TypeScript config needs a TypeScript loader, and this process has none: rename it ${path.basename(absolute).replace(/\.[mc]?ts$/, '.mjs')} (the same object in JavaScript), or run the command through tsx (npx tsx node_modules/.bin/ledgerloop …)`,
        },
      ]);
    }
    try {
      raw = exportedConfig(await loadUserModule(absolute));
    } catch (err) {
      throw new ProjectConfigError(absolute, [
        { field: '(file)', message: `cannot load: ${(err as Error).message.split('\n')[0]}` },
      ]);
    }
  } else {
    throw new ProjectConfigError(absolute, [
      { field: '(file)', message: `unknown config file type ${ext || '(none)'}: use .mjs, .js, .cjs, .json or .ts` },
    ]);
  }
  return parseProjectConfig(raw, absolute);
}

/**
 * The project config for a command: `--config <path>` (it must exist), else the nearest `ledgerloop.config.*`
 * from `cwd` up, else undefined (the built-in demo's behaviour).
 */
export async function loadProjectConfig(
  opts: { readonly configPath?: string; readonly cwd?: string } = {},
): Promise<ProjectConfig | undefined> {
  const cwd = opts.cwd ?? process.cwd();
  if (opts.configPath !== undefined) return readProjectConfig(path.resolve(cwd, opts.configPath));
  const found = findConfigFile(cwd);
  return found === undefined ? undefined : readProjectConfig(found);
}
