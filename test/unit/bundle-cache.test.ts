/**
 * The test stacks' bundle cache (lab/bundle-cache.ts) must never hand out a bundle built from other code or
 * other options: a changed source file or option gives a new key, and the same ones reuse the first build.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cachedBundle, digestOfSources } from '../../lab/bundle-cache';

function tree(): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'bundle-cache-src-'));
  for (const [file, text] of Object.entries({
    'workflows/run.ts': 'export const a = 1;',
    'src/domain/reducer.ts': 'export const b = 2;',
    'lab/faults/crash.ts': 'export const c = 3;',
    'examples/ticketing/src/tools.ts': 'export const d = 4;',
    'package-lock.json': '{"lockfileVersion":3}',
    'src/node_modules/ignored.ts': 'not a source',
  })) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

describe('the bundle cache', () => {
  it.each([
    'workflows/run.ts',
    'src/domain/reducer.ts',
    'lab/faults/crash.ts',
    'examples/ticketing/src/tools.ts',
    'package-lock.json',
  ])('a change to %s changes the sources digest', (file) => {
    const root = tree();
    const before = digestOfSources(root);
    expect(digestOfSources(root)).toBe(before);
    writeFileSync(path.join(root, file), `${readFileSync(path.join(root, file), 'utf8')} `);
    expect(digestOfSources(root)).not.toBe(before);
  });

  it('a new source file changes the digest; a file under node_modules does not', () => {
    const root = tree();
    const before = digestOfSources(root);
    writeFileSync(path.join(root, 'src/node_modules/ignored.ts'), 'changed');
    expect(digestOfSources(root)).toBe(before);
    writeFileSync(path.join(root, 'workflows/new-step.ts'), 'export {};');
    expect(digestOfSources(root)).not.toBe(before);
  });

  it('the same options reuse the first build; other options build their own', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bundle-cache-'));
    const builds: string[] = [];
    const build = async (file: string): Promise<string> => {
      builds.push(file);
      writeFileSync(file, `bundle ${builds.length}`);
      return file;
    };
    const a = await cachedBundle(dir, { tracing: false }, build);
    const again = await cachedBundle(dir, { tracing: false }, build);
    const traced = await cachedBundle(dir, { tracing: true }, build);
    const tools = await cachedBundle(dir, { tracing: false, toolsModule: '/x/tools.ts' }, build);
    expect(again).toBe(a);
    expect(new Set([a, traced, tools]).size).toBe(3);
    expect(builds).toHaveLength(3);
    expect(readFileSync(a, 'utf8')).toBe('bundle 1');
    // Only whole bundles are left in the folder: no temporary file of a build.
    expect(readdirSync(dir).filter((f) => !f.startsWith('bundle-'))).toEqual([]);
  });

  it('a failed build leaves nothing behind and is not cached', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bundle-cache-'));
    await expect(
      cachedBundle(dir, { broken: true }, async (file) => {
        writeFileSync(file, 'half a bundle');
        throw new Error('webpack failed');
      }),
    ).rejects.toThrow('webpack failed');
    expect(readdirSync(dir)).toEqual([]);
  });
});
