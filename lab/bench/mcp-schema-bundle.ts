/**
 * What validating MCP schemas would add to a workflow bundle: ajv 8 with ajv-formats (what the MCP SDK brings)
 * against the gate of src/tools/mcp/json-schema.ts, whose converter is zod's (already in every bundle). Each is
 * bundled alone, minified, with zod marked external, and its bytes printed: measured, never assumed.
 *
 *   node -r tsx/cjs lab/bench/mcp-schema-bundle.ts
 */
import { buildSync } from 'esbuild';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

function bytes(contents: string, label: string): number {
  const out = buildSync({
    stdin: { contents, resolveDir: ROOT, loader: 'ts' },
    bundle: true,
    minify: true,
    write: false,
    platform: 'neutral',
    mainFields: ['main', 'module'],
    external: ['zod', 'zod/*'],
    logLevel: 'silent',
  });
  const size = out.outputFiles[0]!.contents.byteLength;
  process.stdout.write(`${label.padEnd(44)} ${size.toLocaleString('en')} bytes (minified)\n`);
  return size;
}

const ajv = bytes(
  "import Ajv from 'ajv'; import addFormats from 'ajv-formats'; export const a = addFormats(new Ajv());",
  'ajv 8 + ajv-formats',
);
const gate = bytes(
  "export { compileJsonSchema } from './src/tools/mcp/json-schema';",
  'the gate (zod external: already in the bundle)',
);
process.stdout.write(`difference                                   ${(ajv - gate).toLocaleString('en')} bytes\n`);
