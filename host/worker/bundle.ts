/**
 * Bundles the workflow code once (Temporal's webpack, about 1.5 s) and writes it to a file every worker process
 * can load, so starting a worker costs no bundling.
 */
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type BundleOptions as SdkBundleOptions } from '@temporalio/worker';
import { TRACING_WORKFLOW_INTERCEPTORS_MODULE } from '../../src/observability/workflow-interceptors';
import { runtimeLogger } from '../../src/observability/logger';
import { dataDir, packageModule, SOURCE_ROOT } from '../../src/package-paths';

type Configuration = Parameters<NonNullable<SdkBundleOptions['webpackConfigHook']>>[0];
/** webpack's `Compiler`, named through the SDK's types (webpack is the SDK's dependency, not ours). */
type Compiler = Parameters<Extract<NonNullable<Configuration['plugins']>[number], (compiler: never) => void>>[0];

/** The folder holding the package's modules: the repository root, or `dist/` of an installed package. */
export const REPO_ROOT = SOURCE_ROOT;
/** The workflow entry, as the file that runs here (TypeScript in the repository, JavaScript installed). */
export const WORKFLOWS_PATH = packageModule('workflows', 'index');

export interface BundleOptions {
  workflowsPath?: string;
  /** Bundle the OpenTelemetry workflow interceptors (see src/observability/tracing.ts). Default false. */
  tracing?: boolean;
  /** More workflow interceptor modules to bundle (the fault lab adds its crash point this way). */
  interceptorModules?: readonly string[];
  /** A user's tool module (absolute path, exports `workflowTools`); default the built-in tools. */
  toolsModule?: string;
}

/** The workflow interceptor modules a bundle with these options carries. */
export function workflowInterceptorModules(opts: Pick<BundleOptions, 'tracing' | 'interceptorModules'>): string[] {
  return [...(opts.tracing ? [TRACING_WORKFLOW_INTERCEPTORS_MODULE] : []), ...(opts.interceptorModules ?? [])];
}

/**
 * With reused V8 contexts every new workflow evaluates every module of the bundle again, so module count is a
 * per-run cost. Scope hoisting (webpack's module concatenation) merges the ES modules into fewer, larger ones:
 * 126 -> 72 modules and about 15% less CPU to load the workflow code per run (docs/performance.md). The inline
 * source map stays, smaller (`WORKFLOW_DEVTOOL`, `CompactBundle`), so workflow stack traces still name
 * our files and lines.
 */
function hoistModules(config: Configuration): Configuration {
  return {
    ...config,
    devtool: WORKFLOW_DEVTOOL,
    plugins: [...(config.plugins ?? []), new CompactBundle()],
    module: { ...config.module, rules: (config.module?.rules ?? []).map(nativeSyntax) },
    optimization: { ...config.optimization, concatenateModules: true, usedExports: true, providedExports: true },
    // `import { z } from 'zod'` in workflow code: one zod per worker, not one per run (host/worker/workflow-zod.ts).
    // zod's CommonJS build would also bring its 120 locales: workflow code uses none (errors are in English).
    // `@noble/hashes` the same way (host/worker/workflow-hashes.ts).
    resolve: {
      ...config.resolve,
      alias: {
        ...aliasesOf(config),
        zod$: WORKFLOW_ZOD,
        [ZOD_LOCALES]: false,
        '@noble/hashes/sha2$': WORKFLOW_HASHES,
        '@noble/hashes/utils$': WORKFLOW_HASHES,
        // A project's tools module imports the workflow-side entries by name: they are this package's own files,
        // the same modules the workflow code uses (also in a clone, where the entries' targets are not built).
        'ledgerloop/tool-registry$': packageModule('src', 'tools', 'registry-entry'),
        'ledgerloop/workflow-tools$': packageModule('src', 'tools', 'index'),
        'ledgerloop/ai-sdk/workflow$': packageModule('workflows', 'ai-sdk', 'index'),
      },
    },
  };
}

/**
 * The SDK compiles workflow TypeScript for ES2017, which turns every object spread, `?.` and `??` into helper
 * calls (`_object_spread` defines each property one by one). The workflow sandbox runs on this Node's V8, which
 * has all of ES2022 natively: compiling for it leaves that syntax as written. Same semantics, less work per
 * event (docs/performance.md, "Replay").
 */
export const WORKFLOW_SYNTAX_TARGET = 'es2022';

type Rule = NonNullable<NonNullable<Configuration['module']>['rules']>[number];

function nativeSyntax(rule: Rule): Rule {
  if (!rule || typeof rule !== 'object' || !rule.use || typeof rule.use !== 'object' || Array.isArray(rule.use))
    return rule;
  const use = rule.use as { loader?: string; options?: { jsc?: Record<string, unknown> } };
  if (!use.loader?.includes('swc-loader') || !use.options?.jsc) return rule;
  return {
    ...rule,
    use: { ...use, options: { ...use.options, jsc: { ...use.options.jsc, target: WORKFLOW_SYNTAX_TARGET } } },
  };
}

/**
 * Every worker parses the bundle's inline source map and keeps it for its whole life (the SDK maps each workflow
 * stack frame through it). The SDK's `inline-source-map` has a segment per token: 95k segments and 2.8 MB for our
 * 1.4 MB of code. Mapping by line keeps what a stack trace shows (file and line) with a third of the segments.
 */
export const WORKFLOW_DEVTOOL = 'inline-cheap-module-source-map';

/** How webpack writes the inline map at the end of a bundle. */
export const INLINE_MAP = '//# sourceMappingURL=data:application/json;charset=utf-8;base64,';

/**
 * Makes the bundle cheaper to hold, after webpack writes the inline map into it:
 * - the map drops the embedded source text of vendored files (zod, the SDK: 1.2 MB of its 1.5 MB of sources);
 *   they stay mapped by file and line. Our own files keep theirs, which the SDK's enhanced stack trace returns;
 * - the code is written in ASCII: a non-ASCII character becomes its `\uXXXX` escape. V8 keeps a string with
 *   even one character outside Latin-1 (a `’` in a message, a `→` in a comment) at two bytes a character, and
 *   a heap snapshot of a replaying process held the 2 MB bundle as a 4 MB string (docs/performance.md). The
 *   escapes appear only in strings, templates (not tagged), regexes and comments, where they mean the same
 *   character; columns move, and the line-only map has none.
 */
class CompactBundle {
  apply(compiler: Compiler): void {
    const { Compilation, sources } = compiler.webpack;
    compiler.hooks.thisCompilation.tap(CompactBundle.name, (compilation) => {
      compilation.hooks.processAssets.tap(
        { name: CompactBundle.name, stage: Compilation.PROCESS_ASSETS_STAGE_DEV_TOOLING + 1 },
        (assets) => {
          for (const [name, asset] of Object.entries(assets)) {
            if (!name.endsWith('.js')) continue;
            const text = asset.source().toString();
            const at = text.lastIndexOf(INLINE_MAP);
            if (at < 0) continue;
            const map = JSON.parse(
              Buffer.from(text.slice(at + INLINE_MAP.length).trim(), 'base64').toString('utf8'),
            ) as InlineMap;
            const sourcesContent = map.sources.map((source, i) =>
              isVendored(source) ? null : (map.sourcesContent?.[i] ?? null),
            );
            const encoded = Buffer.from(JSON.stringify({ ...map, sourcesContent })).toString('base64');
            const code = asciiOnly(text.slice(0, at));
            compilation.updateAsset(name, new sources.RawSource(`${code}${INLINE_MAP}${encoded}\n`));
          }
        },
      );
    });
  }
}

/** `text` with each UTF-16 unit above 0x7f written as its `\uXXXX` escape. */
export function asciiOnly(text: string): string {
  return text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

interface InlineMap {
  readonly sources: readonly string[];
  readonly sourcesContent?: readonly (string | null)[];
}

const isVendored = (source: string): boolean => /[\\/]node_modules[\\/]/.test(source);

const WORKFLOW_ZOD = packageModule('host', 'worker', 'workflow-zod');
const WORKFLOW_HASHES = packageModule('host', 'worker', 'workflow-hashes');
const ZOD_LOCALES = require.resolve('zod/v4/locales/index.cjs');

function aliasesOf(config: Configuration): Record<string, string | false | string[]> {
  const alias = config.resolve?.alias;
  return alias && !Array.isArray(alias) ? alias : {};
}

/** Modules every workflow of a worker shares (src/tools/shared-declarations.ts says why and what is safe). */
export const PRELOAD_MODULES = [packageModule('src', 'tools', 'shared-declarations')];

/** The bundler options every Ledgerloop bundle uses, prebuilt or bundled by a worker in process. */
export const BUNDLER_OPTIONS = { webpackConfigHook: hoistModules, preloadModules: PRELOAD_MODULES };

/** The one module id the workflow code reads its tool registry from (src/tools/workflow-registry.ts). */
export const WORKFLOW_REGISTRY_MODULE = path.join(REPO_ROOT, 'src', 'tools', 'workflow-registry');

/**
 * The bundler options for a worker whose tools come from `toolsModule`: the workflow code's registry module is
 * aliased to it, so the bundle carries the user's declarations and no runtime file changes. Without a module,
 * exactly `BUNDLER_OPTIONS` (the built-in tools).
 */
export function bundlerOptionsFor(toolsModule?: string): typeof BUNDLER_OPTIONS {
  if (toolsModule === undefined) return BUNDLER_OPTIONS;
  if (!path.isAbsolute(toolsModule)) throw new Error(`the tools module must be an absolute path (got ${toolsModule})`);
  return {
    ...BUNDLER_OPTIONS,
    webpackConfigHook: (config) => {
      const hoisted = hoistModules(config);
      return {
        ...hoisted,
        resolve: {
          ...hoisted.resolve,
          // A relative import resolves to its absolute path before aliasing, so the key is the module's path.
          alias: { ...aliasesOf(hoisted), [WORKFLOW_REGISTRY_MODULE]: toolsModule },
        },
      };
    },
  };
}

export async function buildWorkflowBundle(opts: BundleOptions = {}): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath: opts.workflowsPath ?? WORKFLOWS_PATH,
    ...bundlerOptionsFor(opts.toolsModule),
    workflowInterceptorModules: workflowInterceptorModules(opts),
    logger: runtimeLogger({ component: 'bundler', level: 'WARN', format: 'text' }),
  });
}

/** Bundle the workflows into `file` (default `.data/workflow-bundle.js`) and return its path. */
export async function writeWorkflowBundle(
  file = path.join(dataDir(), 'workflow-bundle.js'),
  opts: BundleOptions = {},
): Promise<string> {
  const { code } = await buildWorkflowBundle(opts);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, code);
  if (!existsSync(file)) throw new Error(`could not write the workflow bundle to ${file}`);
  return file;
}
