/**
 * The JSON Schema of the fault protocol, generated from the zod schema (`z.toJSONSchema`, draft 2020-12, input
 * side: fields with defaults are optional). docs/fault-protocol.schema.json holds the current output; a unit test
 * fails when it is stale, and `node -r tsx/cjs scripts/fault-schema.ts` rewrites it.
 */
import path from 'node:path';
import { z } from 'zod';
import { FaultProtocol, PROTOCOL_FORMAT } from './protocol-format';

/** Where the generated schema is kept. */
export const SCHEMA_FILE = path.resolve(__dirname, '..', '..', 'docs', 'fault-protocol.schema.json');

/** The schema object (cross-field rules such as "this kind at that point" are checked by the runner only). */
export function faultProtocolJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(FaultProtocol, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: 'https://ledgerloop.dev/schemas/fault-protocol-1.json',
    title: `Ledgerloop fault protocol (${PROTOCOL_FORMAT})`,
    description:
      'Crash points, injected faults and assertions for `ledgerloop faults`. Generated from lab/faults/protocol-format.ts; see docs/fault-protocol.md.',
  };
}

/** The file text: 2-space JSON and a final newline. */
export function faultProtocolJsonSchemaText(): string {
  return `${JSON.stringify(faultProtocolJsonSchema(), null, 2)}\n`;
}
