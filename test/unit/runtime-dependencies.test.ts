/**
 * The package's JavaScript loads only what a consumer installs: every package a module of the build
 * (tsconfig.build.json, followed import by import as tsc follows them) imports at run time is a dependency or a
 * peer in package.json. A devDependency that happens to sit in this repository's node_modules (p-limit comes with
 * jest) would pass every test here and fail in an installed package. Type-only imports are erased and do not count
 * (scripts/check-package.sh checks the declarations' imports).
 */
import { builtinModules } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or undefined for a relative or node: one. */
function packageOf(spec: string): string | undefined {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) return undefined;
  const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!;
  return builtinModules.includes(name) ? undefined : name;
}

/** The specifiers `source` loads at run time: value imports, re-exports, `require(...)` and `import(...)`. */
function runtimeSpecifiers(source: ts.SourceFile): string[] {
  const out: string[] = [];
  const literal = (e: ts.Expression | undefined): void => {
    if (e !== undefined && ts.isStringLiteralLike(e)) out.push(e.text);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) literal(node.moduleSpecifier);
    } else if (ts.isExportDeclaration(node)) {
      if (!node.isTypeOnly) literal(node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node)) {
      if (!node.isTypeOnly && ts.isExternalModuleReference(node.moduleReference))
        literal(node.moduleReference.expression);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isRequire = ts.isIdentifier(callee) && callee.text === 'require';
      const isRequireResolve =
        ts.isPropertyAccessExpression(callee) &&
        ts.isIdentifier(callee.expression) &&
        callee.expression.text === 'require' &&
        callee.name.text === 'resolve';
      // `require.resolve(spec, { paths: [dir] })` looks inside another package's tree (host/client/history-json.ts
      // finds the protobufjs copy that @temporalio/proto loads): that package's dependency, not ours.
      const insideAnother = isRequireResolve && node.arguments.length > 1;
      if ((isRequire || isRequireResolve || callee.kind === ts.SyntaxKind.ImportKeyword) && !insideAnother)
        literal(node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** package → the repository files that load it at run time. */
function undeclared(sources: readonly ts.SourceFile[], declared: ReadonlySet<string>): Record<string, string[]> {
  const found: Record<string, string[]> = {};
  for (const source of sources) {
    for (const spec of runtimeSpecifiers(source)) {
      const name = packageOf(spec);
      if (name === undefined || declared.has(name)) continue;
      (found[name] ??= []).push(path.relative(ROOT, path.resolve(ROOT, source.fileName)));
    }
  }
  return found;
}

const parse = (text: string): ts.SourceFile => ts.createSourceFile('x.ts', text, ts.ScriptTarget.ES2022, true);

test('every package the built modules load at run time is a dependency or a peer', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
  };
  // The package's own entries (`ledgerloop/services` from a template) resolve to itself.
  const declared = new Set([
    pkg.name,
    ...Object.keys(pkg.dependencies ?? {}),
    ...Object.keys(pkg.peerDependencies ?? {}),
  ]);
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'tsconfig.build.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const program = ts.createProgram({ rootNames: config.fileNames, options: { ...config.options, noEmit: true } });
  const ours = program
    .getSourceFiles()
    .filter((s) => !s.isDeclarationFile && !s.fileName.includes('/node_modules/') && s.fileName.startsWith(ROOT));
  // The walk reached the package's code, the console and the services included.
  const rel = new Set(ours.map((s) => path.relative(ROOT, s.fileName)));
  expect([...rel]).toEqual(expect.arrayContaining(['host/index.ts', 'console/call-facts.ts', 'services/http-kit.ts']));
  expect(undeclared(ours, declared)).toEqual({});
});

test('the check can fail: a value import, a require, a resolve and a re-export of an undeclared package are found', () => {
  const source = parse(
    [
      "import pLimit from 'p-limit';",
      "import type { Options } from 'type-only';",
      "import { type A, type B } from 'type-only-named';",
      "import { readFile } from 'node:fs';",
      "import path from 'path';",
      "import { z } from 'zod/v4';",
      "export { x } from '@scope/pkg/sub';",
      "const m = require('required');",
      "const l = import('lazy');",
      "const r = require.resolve('resolved');",
      "const t = require.resolve('their-own/ext', { paths: [dir] });",
      "import './local';",
    ].join('\n'),
  );
  expect(undeclared([source], new Set(['zod']))).toEqual({
    'p-limit': ['x.ts'],
    '@scope/pkg': ['x.ts'],
    required: ['x.ts'],
    lazy: ['x.ts'],
    resolved: ['x.ts'],
  });
});
