/**
 * The checked-in MCP tool set: one JSON file per MCP server, written by `ledgerloop mcp import` and committed by the
 * team. It is what a workflow sees of the server (bundled into the workflow code, so it is the same on every replay),
 * and what the worker holds the live server to: a tool whose live schema or annotations no longer match its
 * `digest` is refused, and a tool the server no longer lists fails closed.
 *
 *   {
 *     "format": "ledgerloop.mcp-tools/1",
 *     "server": "files",                         // the server's name in the project: the worker's `mcp.servers.files`
 *     "tools": [{
 *       "name": "files_write_file",              // what the model sees
 *       "mcpName": "write_file",                 // what the server calls it
 *       "version": 1,                            // part of the operation key; bumped when the live tool changes
 *       "effect": "write",                       // read | write: the team's word, never the server's
 *       "contract": "none",                      // what a retry may do (docs/tools.md)
 *       "approval": "required",                  // required | none (the policy may ask for one either way)
 *       "onToolError": "unknown",                // after `isError: true`: no_effect | unknown
 *       "lookup": { ... },                       // optional: how to find what a call did (a read of the same server)
 *       "inputSchema": { ... }, "outputSchema": { ... },
 *       "hints": { "destructiveHint": true },    // the server's annotations at import: untrusted, for the record
 *       "digest": "…",                           // of the live tool's name, schemas and annotations at import
 *       "maxArgumentBytes": 65536, "maxResultBytes": 65536
 *     }]
 *   }
 *
 * Pure data, read inside the workflow sandbox; parsing it builds zod schemas, so only a tool module's `load` does.
 */
import { z } from 'zod';
import type { Json } from '../../domain/canonical';

export const MCP_TOOL_SET_FORMAT = 'ledgerloop.mcp-tools/1';

/** The MCP annotations as a server reported them. Hints only: the spec says not to trust them from a server. */
export interface McpHints {
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/**
 * A reconciliation by reading: after a lost response, call the read `tool` of the same server with `arguments`
 * (JSON whose `{ "$arg": "field" }` leaves are the call's own argument `field`) and call the effect found when the
 * answer's text equals `found.textEquals` (the same kind of template), e.g. `read_text_file { path }` after
 * `write_file { path, content }`, found when the text is `content`. It proves the state the call meant, not that
 * this call made it.
 */
export interface McpLookup {
  readonly tool: string;
  readonly arguments: Json;
  readonly found: { readonly textEquals: Json };
}

export interface McpToolDeclaration {
  readonly name: string;
  readonly mcpName: string;
  readonly version: number;
  readonly description: string;
  readonly inputSchema: { readonly [key: string]: Json };
  readonly outputSchema?: { readonly [key: string]: Json };
  readonly effect: 'read' | 'write';
  readonly contract: 'idempotent_by_key' | 'reconcilable_by_lookup' | 'none';
  readonly approval: 'required' | 'none';
  readonly onToolError: 'no_effect' | 'unknown';
  readonly lookup?: McpLookup;
  readonly hints: McpHints;
  readonly digest: string;
  readonly maxArgumentBytes: number;
  readonly maxResultBytes: number;
  /** The policy action; default `mcp.<server>.<mcpName>`. */
  readonly action?: string;
}

export interface McpToolSet {
  readonly format: typeof MCP_TOOL_SET_FORMAT;
  /** The server's name in the project: the tools' service, and the key of the worker's connection settings. */
  readonly server: string;
  /** What the server said it was at import (for the record). */
  readonly serverInfo?: { readonly name: string; readonly version: string };
  /**
   * How long the server answers a repeated request under the same operation key (`_meta`) from its first answer:
   * declare it only for a server that reads Ledgerloop's keys. Absent: a same-key resend is never risked.
   */
  readonly keyRetentionMs?: number;
  readonly tools: readonly McpToolDeclaration[];
}

const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const SERVER_NAME = /^[a-z][a-z0-9_-]{0,31}$/;

const JsonValue: z.ZodType<Json> = z.lazy(() =>
  z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(JsonValue), z.record(z.string(), JsonValue)]),
);
const JsonObject = z.record(z.string(), JsonValue);

const Hints = z
  .object({
    readOnlyHint: z.boolean().optional(),
    destructiveHint: z.boolean().optional(),
    idempotentHint: z.boolean().optional(),
    openWorldHint: z.boolean().optional(),
  })
  .strict();

const Lookup = z
  .object({
    tool: z.string().min(1).max(128),
    arguments: JsonValue,
    found: z.object({ textEquals: JsonValue }).strict(),
  })
  .strict();

const Declaration = z
  .object({
    name: z.string().regex(TOOL_NAME, 'a tool name: a letter, then up to 63 of A-Z a-z 0-9 _ -'),
    mcpName: z.string().min(1).max(128),
    version: z.number().int().positive(),
    description: z.string().max(4_096),
    inputSchema: JsonObject,
    outputSchema: JsonObject.optional(),
    effect: z.enum(['read', 'write']),
    contract: z.enum(['idempotent_by_key', 'reconcilable_by_lookup', 'none']),
    approval: z.enum(['required', 'none']),
    onToolError: z.enum(['no_effect', 'unknown']),
    lookup: Lookup.optional(),
    hints: Hints,
    digest: z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in hex'),
    maxArgumentBytes: z.number().int().positive().max(1_048_576),
    maxResultBytes: z.number().int().positive().max(1_048_576),
    action: z.string().min(1).max(200).optional(),
  })
  .strict();

const ToolSetFile = z
  .object({
    format: z.literal(MCP_TOOL_SET_FORMAT),
    server: z.string().regex(SERVER_NAME, 'a server name: a-z, then up to 31 of a-z 0-9 _ -'),
    serverInfo: z
      .object({ name: z.string().max(200), version: z.string().max(100) })
      .strict()
      .optional(),
    keyRetentionMs: z.number().int().positive().optional(),
    tools: z.array(Declaration).min(1).max(500),
  })
  .strict();

/** A tool set file that cannot be used: the message names the file's field and what is wrong. */
export class McpToolSetError extends Error {
  override readonly name = 'Tools.Invalid';
}

/**
 * Checks a parsed tool set file: its shape, unique names, and the rules between fields (an object input schema, no
 * `tenant` argument, a lookup that names a read of the same set). Throws `McpToolSetError`.
 */
export function parseToolSet(value: unknown, where = 'the MCP tool set'): McpToolSet {
  const parsed = ToolSetFile.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new McpToolSetError(`${where} is invalid at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  const set = parsed.data as McpToolSet;
  const names = new Set<string>();
  const mcpNames = new Map(set.tools.map((t) => [t.mcpName, t]));
  for (const tool of set.tools) {
    const at = `${where}: tool ${tool.name}`;
    if (names.has(tool.name)) throw new McpToolSetError(`${at} is declared twice`);
    names.add(tool.name);
    if (tool.inputSchema['type'] !== 'object')
      throw new McpToolSetError(`${at}: an MCP input schema has type "object" at its root`);
    const props = tool.inputSchema['properties'];
    if (typeof props === 'object' && props !== null && Object.hasOwn(props, 'tenant'))
      throw new McpToolSetError(`${at}: an argument named "tenant" is reserved for the run's tenant`);
    if (tool.lookup !== undefined) {
      const reader = mcpNames.get(tool.lookup.tool);
      if (reader === undefined || reader.effect !== 'read')
        throw new McpToolSetError(`${at}: its lookup ${tool.lookup.tool} must be a read declared in the same set`);
    }
    if (tool.effect === 'read' && tool.lookup !== undefined)
      throw new McpToolSetError(`${at}: a read has no effect to look up`);
  }
  return set;
}
