/**
 * A workflow bundle with the list of modules webpack put in it (each module's file, the modules inside a
 * concatenated one included), and which copies of a package that list holds: a copy is a package root
 * (`.../node_modules/<name>`) with its own `package.json` version.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';

type Configuration = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];
type Compiler = Parameters<Extract<NonNullable<Configuration['plugins']>[number], (compiler: never) => void>>[0];

export interface ListedBundle {
  readonly code: string;
  /** Absolute paths of the files the bundle's modules were built from. */
  readonly modules: readonly string[];
}

export async function bundleWithModuleList(options: BundleOptions): Promise<ListedBundle> {
  const modules = new Set<string>();
  const list = {
    apply(compiler: Compiler) {
      compiler.hooks.done.tap('module-list', (stats) => {
        for (const m of stats.compilation.modules) {
          const inner = (m as { modules?: Iterable<typeof m> }).modules ?? [m];
          for (const x of inner) {
            const resource = (x as { resource?: string }).resource;
            if (resource) modules.add(resource);
          }
        }
      });
    },
  };
  const theirs = options.webpackConfigHook;
  const { code } = await bundleWorkflowCode({
    ...options,
    webpackConfigHook: (config) => {
      const c = theirs ? theirs(config) : config;
      return { ...c, plugins: [...(c.plugins ?? []), list] };
    },
  });
  return { code, modules: [...modules] };
}

export interface PackageCopy {
  readonly root: string;
  readonly version: string;
}

/** The copies of package `name` among `modules`, one per package root. */
export function packageCopies(modules: readonly string[], name: string): PackageCopy[] {
  const roots = new Set<string>();
  const marker = `${path.sep}node_modules${path.sep}${name.split('/').join(path.sep)}${path.sep}`;
  for (const file of modules) {
    const at = file.lastIndexOf(marker);
    if (at >= 0) roots.add(file.slice(0, at + marker.length - 1));
  }
  return [...roots].map((root) => ({
    root,
    version: (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string }).version,
  }));
}
