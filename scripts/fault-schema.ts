/**
 * Writes docs/fault-protocol.schema.json from the zod schema of the fault protocol.
 *
 *   node -r tsx/cjs scripts/fault-schema.ts          rewrite the file
 *   node -r tsx/cjs scripts/fault-schema.ts --check  exit 1 if the file is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import prettier from 'prettier';
import { faultProtocolJsonSchema, faultProtocolJsonSchemaText, SCHEMA_FILE } from '../lab/faults/json-schema';

if (process.argv.includes('--check')) {
  let current: unknown;
  try {
    current = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8'));
  } catch {
    current = undefined;
  }
  if (!isDeepStrictEqual(current, faultProtocolJsonSchema())) {
    process.stderr.write(`${SCHEMA_FILE} is stale: run node -r tsx/cjs scripts/fault-schema.ts\n`);
    process.exit(1);
  }
} else {
  void (async () => {
    // Formatted as `npm run format` would, so the checked-in file stays stable under prettier.
    const options = (await prettier.resolveConfig(SCHEMA_FILE)) ?? {};
    writeFileSync(
      SCHEMA_FILE,
      await prettier.format(faultProtocolJsonSchemaText(), { ...options, filepath: SCHEMA_FILE }),
    );
    process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
  })();
}
