/**
 * The folder tree is the layer tree (eslint.config.mjs): the sandbox is a set of folders, and no layer imports one
 * above it. Each refusal stands beside the same import made where the layers allow it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const ESLINT = path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');

const BUILTIN = "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n";
const importOf = (from: string, target: string) => `import '${path.relative(path.dirname(from), target)}';\n`;

/** Each probe: where it stands, what it imports, and whether the layers refuse it. */
const PROBES: readonly { readonly file: string; readonly text: string; readonly refused: boolean }[] = [
  // The sandbox folders refuse a Node built-in; the adapters, the activities and the host do not.
  ...['workflows/a.ts', 'src/domain/a.ts', 'src/tools/a.ts', 'src/policy/a.ts', 'lab/faults/workflows/a.ts'].map(
    (file) => ({ file, text: BUILTIN, refused: true }),
  ),
  ...['lab/faults/a.ts', 'src/codec/a.ts', 'src/stores/a.ts', 'activities/a.ts', 'host/worker/a.ts'].map((file) => ({
    file,
    text: BUILTIN,
    refused: false,
  })),
  // Nothing below host/ imports it; the CLI above it may.
  ...['src/codec/b.ts', 'workflows/b.ts', 'activities/b.ts'].map((file) => ({
    file,
    text: importOf(file, 'host/worker/index'),
    refused: true,
  })),
  { file: 'cli/b.ts', text: importOf('cli/b.ts', 'host/worker/index'), refused: false },
  // src/ does not import the activities; the host does.
  { file: 'src/stores/c.ts', text: importOf('src/stores/c.ts', 'activities/index'), refused: true },
  { file: 'host/worker/c.ts', text: importOf('host/worker/c.ts', 'activities/index'), refused: false },
  // The runtime does not import the CLI.
  { file: 'host/client/d.ts', text: importOf('host/client/d.ts', 'cli/main'), refused: true },
];

/**
 * The restricted-import messages the repository's ESLint config gives each probe. The rules are typed, so each
 * probe is a real file of the project while one ESLint run reads them all (named `*.layer-probe.ts`, removed after).
 */
function lintAll(): Map<string, string[]> {
  const files = PROBES.map((p) => path.join(ROOT, p.file.replace(/\.ts$/, `.${process.pid}.layer-probe.ts`)));
  try {
    PROBES.forEach((p, i) => {
      fs.mkdirSync(path.dirname(files[i]!), { recursive: true });
      fs.writeFileSync(files[i]!, p.text);
    });
    const r = spawnSync(process.execPath, [ESLINT, '--format', 'json', ...files], { cwd: ROOT, encoding: 'utf8' });
    const results = JSON.parse(r.stdout) as {
      filePath: string;
      messages: { ruleId: string | null; message: string }[];
    }[];
    const out = new Map<string, string[]>();
    for (const result of results) {
      const fatal = result.messages.find((m) => m.ruleId === null);
      if (fatal) throw new Error(`eslint could not lint ${result.filePath}: ${fatal.message}`);
      const probe = PROBES[files.indexOf(result.filePath)]!;
      out.set(
        probe.file,
        result.messages.filter((m) => m.ruleId?.endsWith('no-restricted-imports')).map((m) => m.message),
      );
    }
    return out;
  } finally {
    for (const f of files) fs.rmSync(f, { force: true });
  }
}

let messages: Map<string, string[]>;
beforeAll(() => {
  messages = lintAll();
}, 120_000);

test.each(PROBES.map((p) => [p.refused ? 'refuses' : 'allows', p.file, p.text.split('\n')[0], p] as const))(
  'the layer rules %s %s: %s',
  (_verb, file, _text, probe) => {
    const got = messages.get(file);
    expect(got).toBeDefined();
    if (probe.refused) expect(got).toEqual([expect.stringMatching(/no Node built-ins|layer|host\//)]);
    else expect(got).toEqual([]);
  },
);
