/**
 * A test-only MCP server, in its own process over stdio, built on @modelcontextprotocol/sdk's server. It keeps its
 * effects in its own storage (files under the directory given as its argument), so a test counts them there:
 *
 * | tool         | annotations                             | what it does                                            |
 * |--------------|-----------------------------------------|---------------------------------------------------------|
 * | `append_note`| none at all                             | appends `{ text }` to `notes.jsonl`; no dedupe          |
 * | `put_record` | idempotent, not destructive, not a read | stores `{ id, value }` once per operation key (`_meta`) |
 *
 * Every `tools/call` writes the request's `_meta` to `meta.jsonl`, as the server received it: the proof that the
 * operation key, arguments hash and fence reached the server. `put_record` reads them: a repeat of a key it holds
 * is answered from its record (no new effect); a repeat with other arguments, or no key at all, is refused.
 *
 *   node -r tsx/cjs test/support/mcp/keyed-notes-server.ts <dir>
 */
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const OPERATION_META_KEY = 'dev.ledgerloop/operation';
const dir = process.argv[2];
if (dir === undefined) {
  process.stderr.write('usage: keyed-notes-server <dir>\n');
  process.exit(2);
}

interface Operation {
  readonly key?: unknown;
  readonly argumentsHash?: unknown;
  readonly fence?: unknown;
}

interface StoredRecord {
  readonly argumentsHash: string;
  readonly id: string;
  readonly value: string;
}

function recordMeta(tool: string, meta: Record<string, unknown> | undefined): Operation | undefined {
  appendFileSync(join(dir!, 'meta.jsonl'), `${JSON.stringify({ tool, meta: meta ?? null })}\n`);
  const op = meta?.[OPERATION_META_KEY];
  return typeof op === 'object' && op !== null ? (op as Operation) : undefined;
}

const recordsFile = join(dir, 'records.json');
const records = (): Record<string, StoredRecord> =>
  existsSync(recordsFile) ? (JSON.parse(readFileSync(recordsFile, 'utf8')) as Record<string, StoredRecord>) : {};

const text = (t: string, isError = false) => ({ content: [{ type: 'text' as const, text: t }], isError });

const server = new McpServer({ name: 'keyed-notes', version: '1.0.0' });

server.registerTool(
  'append_note',
  { description: 'Append a note.', inputSchema: { text: z.string().max(1000) } },
  async ({ text: note }, extra) => {
    recordMeta('append_note', extra._meta);
    appendFileSync(join(dir, 'notes.jsonl'), `${JSON.stringify({ text: note })}\n`);
    return text('appended');
  },
);

server.registerTool(
  'put_record',
  {
    description: 'Store a record once per operation key.',
    inputSchema: { id: z.string().max(100), value: z.string().max(1000) },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  },
  async ({ id, value }, extra) => {
    const op = recordMeta('put_record', extra._meta);
    if (typeof op?.key !== 'string' || typeof op.argumentsHash !== 'string')
      return text('refused: no operation key in _meta', true);
    const all = records();
    const held = all[op.key];
    if (held !== undefined) {
      if (held.argumentsHash !== op.argumentsHash) return text('refused: the key was used with other arguments', true);
      return text(`stored ${held.id}`);
    }
    all[op.key] = { argumentsHash: op.argumentsHash, id, value };
    writeFileSync(recordsFile, JSON.stringify(all));
    appendFileSync(join(dir, 'effects.jsonl'), `${JSON.stringify({ key: op.key, id })}\n`);
    return text(`stored ${id}`);
  },
);

server.connect(new StdioServerTransport()).catch((err: unknown) => {
  process.stderr.write(`keyed-notes: ${String(err)}\n`);
  process.exit(1);
});
