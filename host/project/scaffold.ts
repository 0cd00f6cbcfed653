/**
 * `ledgerloop init <dir>`: a new project from one of the package's templates, plus its development keys
 * (`ledgerloop keys`):
 * - `booking` (templates/app, the default): a room-booking agent with one tool and its compensation, its own
 *   service on `ledgerloop/services`, a policy, a fault protocol, a worker, a start script and tests. It needs
 *   nothing but Node, so it is the default;
 * - `downstreams` (templates/downstreams): tools none of which speak Ledgerloop's contract (a function tool over a
 *   payments SDK, an HTTP tool on a Stripe-style API in a process of its own, the team's own service on its own
 *   PostgreSQL through the kit). Its tests need a PostgreSQL (`DATABASE_URL`, or the server binaries).
 * Nothing is overwritten: a folder that exists and is not empty is refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT, packageJsonPath } from '../../src/package-paths';
import { ledgerloopSourceSpec } from './install-source';
import { ensureProjectKeys, keyFilesIn, type KeyFileStatus } from './keys';

/** The templates a project starts from, shipped in the package (`files` in package.json), by name. */
export const TEMPLATES = {
  booking: path.join(PACKAGE_ROOT, 'templates', 'app'),
  downstreams: path.join(PACKAGE_ROOT, 'templates', 'downstreams'),
} as const;

export type TemplateName = keyof typeof TEMPLATES;

/** The default template: it needs nothing but Node (no PostgreSQL), so a first `npm test` passes anywhere. */
export const DEFAULT_TEMPLATE: TemplateName = 'booking';

/** The default template's folder. */
export const TEMPLATE_DIR = TEMPLATES[DEFAULT_TEMPLATE];

/** Whether `name` names a template. */
export function isTemplateName(name: string): name is TemplateName {
  return Object.prototype.hasOwnProperty.call(TEMPLATES, name);
}

/** Files npm would not ship under their own name (`.gitignore` is dropped by `npm pack`): renamed on copy. */
const RENAMED: Readonly<Record<string, string>> = { gitignore: '.gitignore' };

/** npm package names: lower case, no leading dot or underscore, at most 214 characters. */
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/** A project that cannot be written: the folder is taken, or its name is not a package name. */
export class ScaffoldError extends Error {
  override readonly name = 'ScaffoldError';
}

export interface ScaffoldOptions {
  /** The folder to create (its last segment names the package unless `name` does). */
  readonly dir: string;
  readonly name?: string;
  /**
   * How the project depends on ledgerloop: a version range, `file:` path or tarball. Default: where the running
   * ledgerloop came from (src/project/install-source.ts): its tarball or folder, else `^<this version>` from the
   * registry, so the project's `npm install` finds the very package that wrote it.
   */
  readonly ledgerloopSpec?: string;
  /** Which template; default `booking` (DEFAULT_TEMPLATE: it needs nothing but Node). */
  readonly template?: TemplateName;
}

export interface ScaffoldResult {
  readonly dir: string;
  readonly name: string;
  readonly template: TemplateName;
  readonly files: readonly string[];
  readonly keys: readonly KeyFileStatus[];
  /** The `ledgerloop` dependency written into its package.json. */
  readonly ledgerloop: string;
}

interface OwnPackage {
  readonly version: string;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

function ownPackage(): OwnPackage {
  return JSON.parse(fs.readFileSync(packageJsonPath(), 'utf8')) as OwnPackage;
}

/**
 * The peers a project needs at run time, at the versions this package was built and tested with, and the packages
 * the template's own code imports (its package.json `dependencies`, by name) at the ranges this package depends
 * on them: the project then imports `pg` or `hono` as its own dependency, never through ours.
 */
function projectDependencies(own: OwnPackage, spec: string, templateDeps: readonly string[]): Record<string, string> {
  const deps: Record<string, string> = { ledgerloop: spec };
  for (const [name, range] of Object.entries(own.peerDependencies ?? {}))
    if (name === 'zod' || name === '@temporalio/client' || name === '@temporalio/worker') deps[name] = range;
  for (const name of templateDeps) {
    const range = own.dependencies?.[name];
    if (range === undefined)
      throw new ScaffoldError(`the template imports ${name}, which this ledgerloop does not depend on`);
    deps[name] = range;
  }
  return deps;
}

/** A tarball or folder given as a path becomes an absolute `file:` spec npm accepts; anything else is kept. */
function dependencySpec(spec: string | undefined, version: string): string {
  if (spec === undefined) return ledgerloopSourceSpec(PACKAGE_ROOT, version);
  const isPath = spec.startsWith('.') || spec.startsWith('/') || spec.endsWith('.tgz');
  return isPath && !spec.startsWith('file:') ? `file:${path.resolve(spec)}` : spec;
}

function copyTree(from: string, to: string, written: string[], root: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === '.data' || entry.name === '.ledgerloop') continue;
    const target = path.join(to, RENAMED[entry.name] ?? entry.name);
    if (entry.isDirectory()) copyTree(path.join(from, entry.name), target, written, root);
    else {
      fs.copyFileSync(path.join(from, entry.name), target, fs.constants.COPYFILE_EXCL);
      written.push(path.relative(root, target));
    }
  }
}

/** Writes the project, then its development keys. */
export async function scaffoldProject(opts: ScaffoldOptions): Promise<ScaffoldResult> {
  const dir = path.resolve(opts.dir);
  const name = opts.name ?? path.basename(dir).toLowerCase();
  if (name.length > 214 || !PACKAGE_NAME.test(name))
    throw new ScaffoldError(`"${name}" is not an npm package name: lower case letters, digits, . _ - (or --name)`);
  if (fs.existsSync(dir) && (!fs.statSync(dir).isDirectory() || fs.readdirSync(dir).length > 0))
    throw new ScaffoldError(`${dir} exists and is not an empty folder: nothing was written`);
  const template = opts.template ?? DEFAULT_TEMPLATE;
  if (!isTemplateName(template))
    throw new ScaffoldError(`no template "${String(template)}": ${Object.keys(TEMPLATES).join(', ')}`);
  const templateDir = TEMPLATES[template];
  if (!fs.existsSync(path.join(templateDir, 'package.json')))
    throw new ScaffoldError(`the project template is missing from this install (${templateDir})`);
  const own = ownPackage();
  const files: string[] = [];
  copyTree(templateDir, dir, files, dir);
  const pkgFile = path.join(dir, 'package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as Record<string, unknown>;
  const devDependencies: Record<string, string> = {};
  for (const dev of ['typescript', '@types/node']) {
    const range = own.devDependencies?.[dev];
    if (range !== undefined) devDependencies[dev] = range;
  }
  const ledgerloop = dependencySpec(opts.ledgerloopSpec, own.version);
  const written = {
    ...pkg,
    name,
    dependencies: projectDependencies(own, ledgerloop, Object.keys((pkg['dependencies'] ?? {}) as object)),
    devDependencies,
  };
  fs.writeFileSync(pkgFile, `${JSON.stringify(written, null, 2)}\n`);
  const keys = await ensureProjectKeys(keyFilesIn(path.join(dir, '.ledgerloop', 'keys')));
  return { dir, name, template, files, keys, ledgerloop };
}
