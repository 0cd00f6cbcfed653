/**
 * The bench's own workflow bundles: the production bundle with some of its modules replaced by bench stubs (the
 * attribution section's switches, lab/bench/switches/), and bundles built the way a team builds theirs (the AI SDK
 * peer: `bundleWorkflowCode` with the SDK plugin, nothing of Ledgerloop's bundler).
 *
 * A replacement names a runtime module by its absolute path (with extension) and the stub that stands in for it.
 * Every import of that module resolves to the stub, except the stub's own import of it (a stub re-exports what it
 * does not change). A replacement that matched no import fails the build: a switch that did not take would measure
 * the runtime with it on.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type BundleOptions as SdkBundleOptions, type BundlerPlugin } from '@temporalio/worker';
import { BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../../../host/worker/bundle';
import { runtimeLogger } from '../../../src/observability/logger';

type Configuration = Parameters<NonNullable<SdkBundleOptions['webpackConfigHook']>>[0];
type Compiler = Parameters<Extract<NonNullable<Configuration['plugins']>[number], (compiler: never) => void>>[0];

/** Runtime module (absolute path, with extension) → the bench stub that replaces it. */
export type Replacements = Readonly<Record<string, string>>;

export interface BenchBundleSpec {
  /** The workflow entry; default the production one (workflows/index.ts) with Ledgerloop's bundler options. */
  readonly workflowsPath?: string;
  /** Modules replaced in this bundle. */
  readonly replace?: Replacements;
  /** Workflow interceptor modules added to this bundle. */
  readonly interceptorModules?: readonly string[];
  /**
   * Build as a team would, with these SDK bundler plugins and none of Ledgerloop's bundler options (no shared zod,
   * no scope hoisting): the AI SDK peer.
   */
  readonly plugins?: readonly BundlerPlugin[];
}

export interface BenchBundle {
  readonly path: string;
  readonly bytes: number;
  /** The runtime modules the build replaced (each with at least one import). */
  readonly replaced: readonly string[];
}

/** webpack's resolver hook: imports of a replaced module resolve to its stub (not the stub's own import of it). */
class ReplaceModules {
  readonly hits = new Set<string>();
  constructor(private readonly table: Replacements) {}

  apply(compiler: Compiler): void {
    compiler.hooks.normalModuleFactory.tap(ReplaceModules.name, (nmf) => {
      nmf.hooks.afterResolve.tap(ReplaceModules.name, (data) => {
        const created = data.createData as Record<'resource' | 'request' | 'userRequest' | 'context', unknown>;
        const resource = typeof created.resource === 'string' ? created.resource.split('?')[0] : undefined;
        if (resource === undefined) return;
        const stub = this.table[resource];
        if (stub === undefined || data.contextInfo.issuer === stub) return;
        // The stub is a module of its own (its id, its folder for its own imports), not the module it replaces.
        created.resource = stub;
        for (const field of ['request', 'userRequest'] as const) {
          const v = created[field];
          if (typeof v === 'string') created[field] = v.split(resource).join(stub);
        }
        created.context = path.dirname(stub);
        this.hits.add(resource);
      });
    });
  }
}

function checkReplacements(table: Replacements): void {
  for (const [from, to] of Object.entries(table)) {
    if (!path.isAbsolute(from) || !path.isAbsolute(to))
      throw new Error(`a bench replacement names absolute paths only (${from} → ${to})`);
    for (const file of [from, to]) statSync(file); // both must exist: a moved runtime module fails here, named
  }
}

/** Builds `spec` into `file`; throws when a replacement matched no import. */
export async function writeBenchBundle(file: string, spec: BenchBundleSpec = {}): Promise<BenchBundle> {
  const table = spec.replace ?? {};
  checkReplacements(table);
  const replacer = new ReplaceModules(table);
  const logger = runtimeLogger({ component: 'bench-bundler', level: 'WARN', format: 'text' });
  const interceptors = { workflowInterceptorModules: [...(spec.interceptorModules ?? [])] };
  const addReplacer = (config: Configuration): Configuration => ({
    ...config,
    plugins: [...(config.plugins ?? []), replacer],
  });
  const { code } = spec.plugins
    ? await bundleWorkflowCode({
        workflowsPath: spec.workflowsPath ?? WORKFLOWS_PATH,
        plugins: [...spec.plugins],
        webpackConfigHook: addReplacer,
        ...interceptors,
        logger,
      })
    : await bundleWorkflowCode({
        workflowsPath: spec.workflowsPath ?? WORKFLOWS_PATH,
        preloadModules: BUNDLER_OPTIONS.preloadModules,
        webpackConfigHook: (config) => addReplacer(BUNDLER_OPTIONS.webpackConfigHook(config)),
        ...interceptors,
        logger,
      });
  const missed = Object.keys(table).filter((m) => !replacer.hits.has(m));
  if (missed.length > 0)
    throw new Error(`bench bundle ${path.basename(file)}: no import of ${missed.join(', ')} was replaced`);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, code);
  return { path: file, bytes: Buffer.byteLength(code), replaced: [...replacer.hits] };
}
