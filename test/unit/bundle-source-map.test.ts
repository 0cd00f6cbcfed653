/**
 * The workflow bundle's inline source map: what every worker parses and keeps for the life of the process.
 * It maps by line (no column segments) and carries the sources of our own files only, so a stack trace still
 * names our file and line while the worker holds far less; the code is ASCII, which V8 holds at one byte a
 * character (docs/performance.md, "The bundle a worker holds").
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SourceMapConsumer, type RawSourceMap } from 'source-map';
import { asciiOnly, buildWorkflowBundle, INLINE_MAP as MARK, REPO_ROOT } from '../../host/worker/bundle';
import { installRuntimeLogger } from '../../src/observability/logger';

jest.setTimeout(120_000);

let code: string;
let map: RawSourceMap;

beforeAll(async () => {
  installRuntimeLogger({ component: 'bundle-map', level: 'OFF' });
  const bundle = (await buildWorkflowBundle()).code;
  const at = bundle.lastIndexOf(MARK);
  expect(at).toBeGreaterThan(0);
  code = bundle.slice(0, at);
  map = JSON.parse(Buffer.from(bundle.slice(at + MARK.length).trim(), 'base64').toString('utf8')) as RawSourceMap;
});

const isVendored = (source: string) => source.includes(`${path.sep}node_modules${path.sep}`);

test('the map keeps the source of every file of ours and none of the vendored ones', () => {
  // Our files: under the repository, outside node_modules (webpack's own runtime and the SDK's generated entry
  // are neither ours nor vendored files, and carry whatever webpack gives them).
  const ours = map.sources.filter((s) => s.startsWith(`${REPO_ROOT}${path.sep}`) && !isVendored(s) && existsSync(s));
  const vendored = map.sources.filter(isVendored);
  expect(ours.length).toBeGreaterThan(20);
  expect(vendored.length).toBeGreaterThan(20); // zod and the SDK are still mapped, by line
  const contentOf = (s: string) => map.sourcesContent?.[map.sources.indexOf(s)] ?? null;
  for (const s of ours) expect(contentOf(s)).toBe(readFileSync(s, 'utf8'));
  expect(vendored.filter((s) => contentOf(s) !== null)).toEqual([]);
});

test('the map has at most one segment per generated line', () => {
  const lines = map.mappings.split(';');
  expect(lines.filter((l) => l.includes(',')).length).toBe(0);
  expect(lines.filter((l) => l !== '').length).toBeGreaterThan(1000);
});

test('a position anywhere on a line of workflow code maps to the file and line it was written on', async () => {
  const file = path.join(REPO_ROOT, 'workflows', 'agent-run.workflow.ts');
  const original = readFileSync(file, 'utf8').split('\n');
  const needle = original.findIndex((l) => l.includes('export async function agentRun'));
  expect(needle).toBeGreaterThanOrEqual(0);
  const generated = code.split('\n');
  const line = generated.findIndex((l) => l.includes('async function agentRun('));
  expect(line).toBeGreaterThanOrEqual(0);
  const column = generated[line]!.indexOf('agentRun');
  const consumer = await new SourceMapConsumer(map);
  try {
    // How the SDK asks (its prepareStackTrace): the frame's line and column.
    expect(consumer.originalPositionFor({ line: line + 1, column })).toMatchObject({
      source: file,
      line: needle + 1,
    });
  } finally {
    consumer.destroy();
  }
});

test('the code is ASCII, so V8 holds it at one byte a character', () => {
  expect(code.match(/[^\x20-\x7e\n\r\t]/g) ?? []).toEqual([]);
});

test('an escaped character means the same in a string, a template, a regex and an identifier', () => {
  const source = [
    "const quote = 'approver\u2019s · ø';",
    'const template = `turn ${1} · → ✖ 😀`;',
    "const pattern = /·+/u.test('··') && /[😀]/u.test('😀');",
    'const ø = 1;',
    '[quote, template, pattern, ø]',
  ].join('\n');
  const escaped = asciiOnly(source);
  expect(escaped).toMatch(/^[\x20-\x7e\n]*$/);
  expect((0, eval)(escaped)).toEqual((0, eval)(source));
  expect((0, eval)(escaped)).toEqual(['approver’s · ø', 'turn 1 · → ✖ 😀', true, 1]);
});
