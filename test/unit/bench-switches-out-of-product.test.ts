/**
 * The attribution section's switches (lab/bench/switches/) take guarantees out, so they live in the bench's build
 * only: the shipped workflow bundle holds no switch mark, and no file the package compiles (tsconfig.build.json's
 * files and everything they import) is a bench file. Positive controls: a bench switch bundle holds its mark, and
 * the same import walk from the attribution section reaches the switches.
 */
import path from 'node:path';
import ts from 'typescript';
import { buildWorkflowBundle, REPO_ROOT } from '../../host/worker/bundle';
import { writeBenchBundle } from '../../lab/bench/lib/bundles';
import { RUNTIME_MODULES } from '../../lab/bench/switches/catalogue';
import { SWITCH_MARK } from '../../lab/bench/switches/marks';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';

jest.setTimeout(180_000);

const BENCH = path.join(REPO_ROOT, 'lab', 'bench') + path.sep;
const SWITCHES = path.join(BENCH, 'switches') + path.sep;

/** Every source file a TypeScript program rooted at `roots` (with the build's options) reads. */
function programFiles(roots: readonly string[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(REPO_ROOT, 'tsconfig.build.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.build.json did not parse');
  const program = ts.createProgram({ rootNames: [...roots], options: config.options });
  return program
    .getSourceFiles()
    .map((f) => path.resolve(f.fileName))
    .filter((f) => !f.includes(`${path.sep}node_modules${path.sep}`));
}

function buildRoots(): string[] {
  const config = JSON.parse(readFileSync(path.join(REPO_ROOT, 'tsconfig.build.json'), 'utf8')) as { files: string[] };
  return config.files.map((f) => path.join(REPO_ROOT, f));
}

describe('the bench switches stay out of the product', () => {
  it('the shipped workflow bundle holds no switch mark; a bench switch bundle holds its own', async () => {
    const shipped = await buildWorkflowBundle();
    expect(shipped.code.length).toBeGreaterThan(100_000);
    expect(shipped.code).not.toContain(SWITCH_MARK);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-switch-'));
    try {
      const bench = await writeBenchBundle(path.join(dir, 'zod-off.js'), {
        replace: { [RUNTIME_MODULES.workflowZod]: path.join(SWITCHES, 'workflows', 'zod.off.ts') },
      });
      expect(bench.replaced).toEqual([RUNTIME_MODULES.workflowZod]);
      expect(readFileSync(bench.path, 'utf8')).toContain(`${SWITCH_MARK}:zod`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('no file the package compiles is a bench file; the attribution section reaches the switches', () => {
    const shipped = programFiles(buildRoots());
    expect(shipped.length).toBeGreaterThan(100);
    expect(shipped.filter((f) => f.startsWith(BENCH))).toEqual([]);
    const bench = programFiles([path.join(BENCH, 'sections', 'attribution.ts')]);
    expect(bench.filter((f) => f.startsWith(SWITCHES)).length).toBeGreaterThan(0);
  });
});
