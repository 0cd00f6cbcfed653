/**
 * The versioning lifecycle (docs/versioning.md), enforced: every patch call in workflows/ names a registered
 * patch, every registered patch has its fixtures, and no patch outlives its window. Each check is also run over a
 * planted breach, so it is shown to fail.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PATCH_WINDOW_DAYS, PATCHES, type RegisteredPatch } from '../../workflows/patches';

const ROOT = path.join(__dirname, '..', '..');
const DAY_MS = 86_400_000;

function sources(dir: string): Array<{ file: string; text: string }> {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) return sources(file);
    if (!entry.endsWith('.ts')) return [];
    // Calls in code, not the words in comments.
    const text = readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    return [{ file: path.relative(ROOT, file), text }];
  });
}

/** What breaks the rule, for these sources and this registry, on `today`. */
function breaches(
  files: ReadonlyArray<{ file: string; text: string }>,
  registry: readonly RegisteredPatch[],
  fixturesOf: (id: string) => number,
  today: number,
): string[] {
  const out: string[] = [];
  const byId = new Map(registry.map((p) => [p.id, p]));
  for (const { file, text } of files) {
    for (const m of text.matchAll(/\b(patched|deprecatePatch)\(([^)]*)\)/g)) {
      const literal = /^\s*'([a-z0-9-]+)'\s*$/.exec(m[2]!);
      if (!literal) {
        out.push(`${file}: ${m[1]}(${m[2]}) does not name its patch as a string literal`);
        continue;
      }
      const patch = byId.get(literal[1]!);
      if (!patch) out.push(`${file}: ${m[1]}('${literal[1]}') is not registered in workflows/patches.ts`);
      else if ((m[1] === 'patched') !== (patch.stage === 'patched'))
        out.push(`${file}: ${m[1]}('${patch.id}') but the registry says ${patch.stage}`);
    }
  }
  for (const p of registry) {
    if (fixturesOf(p.id) === 0) out.push(`${p.id} has no fixtures under test/replay/histories/patches/${p.id}/`);
    const age = (today - Date.parse(`${p.introduced}T00:00:00Z`)) / DAY_MS;
    if (p.stage === 'patched' && age > PATCH_WINDOW_DAYS)
      out.push(`${p.id} is still patched ${Math.floor(age)} days after ${p.introduced}: deprecate it`);
    if (age > 2 * PATCH_WINDOW_DAYS) out.push(`${p.id} outlived its window (${Math.floor(age)} days): remove it`);
  }
  return out;
}

function fixturesOf(id: string): number {
  const dir = path.join(ROOT, 'test', 'replay', 'histories', 'patches', id);
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')).length : 0;
}

test('the workflow code carries only registered patches, each with its fixtures, each within its window', () => {
  expect(breaches(sources(path.join(ROOT, 'workflows')), PATCHES, fixturesOf, Date.now())).toEqual([]);
});

describe('the checks fail on a breach', () => {
  const today = Date.parse('2027-03-01T00:00:00Z');
  const code = [{ file: 'workflows/x.ts', text: "if (patched('new-refund-path')) {}" }];
  const registered: RegisteredPatch = { id: 'new-refund-path', introduced: '2027-02-25', stage: 'patched' };

  test('a patch within its window, registered, with fixtures: no breach (the control)', () => {
    expect(breaches(code, [registered], () => 2, today)).toEqual([]);
  });

  test('an unregistered patch', () => {
    expect(breaches(code, [], () => 2, today)).toEqual([
      "workflows/x.ts: patched('new-refund-path') is not registered in workflows/patches.ts",
    ]);
  });

  test('a patch id that is not a literal', () => {
    expect(breaches([{ file: 'w.ts', text: 'patched(SOME_ID)' }], [], () => 0, today)).toEqual([
      'w.ts: patched(SOME_ID) does not name its patch as a string literal',
    ]);
  });

  test('a registered patch without fixtures', () => {
    expect(breaches(code, [registered], () => 0, today)).toEqual([
      'new-refund-path has no fixtures under test/replay/histories/patches/new-refund-path/',
    ]);
  });

  test('a patch kept past its window, then past two', () => {
    const old = { ...registered, introduced: '2027-02-01' };
    expect(breaches(code, [old], () => 2, today)).toEqual([
      'new-refund-path is still patched 28 days after 2027-02-01: deprecate it',
    ]);
    const older = { ...registered, introduced: '2027-01-01', stage: 'deprecated' as const };
    const deprecated = [{ file: 'workflows/x.ts', text: "deprecatePatch('new-refund-path')" }];
    expect(breaches(deprecated, [older], () => 2, today)).toEqual([
      'new-refund-path outlived its window (59 days): remove it',
    ]);
  });
});
