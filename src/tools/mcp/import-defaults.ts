/**
 * The declaration `ledgerloop mcp import` writes for a tool the server lists, before the team edits it. The
 * server's annotations are untrusted hints (the MCP specification says as much), so they only pick defaults, and
 * every default errs on the side of a human:
 *
 * | the server hints                  | effect | contract                                   | approval   |
 * |-----------------------------------|--------|--------------------------------------------|------------|
 * | `readOnlyHint: true`              | read   | none (a read has no effect to repeat)      | none       |
 * | `idempotentHint: true`, confirmed | write  | idempotent_by_key (needs `keyRetentionMs`) | by hints   |
 * | `idempotentHint: true` alone      | write  | none                                       | by hints   |
 * | `destructiveHint: true`, no hints | write  | none: an operator decides after a loss     | required   |
 *
 * A write whose server hints it is not destructive (`destructiveHint: false`) is imported without an approval;
 * anything else that writes waits for one. The team's declaration, once committed, wins over all of this.
 */
import type { Json } from '../../domain/canonical';
import { toolDigest, type ListedTool } from './digest';
import type { McpHints, McpToolDeclaration } from './tool-set';

export interface ImportChoices {
  /** Tool names on the server whose `idempotentHint` the team confirms: they import as `idempotent_by_key`. */
  readonly confirmIdempotent?: readonly string[];
  /** The prefix of the names the model sees; default `<server>_`. */
  readonly prefix?: string;
}

/** The default byte limits of arguments and results: an MCP answer is untrusted and lands in history. */
export const DEFAULT_MCP_MAX_BYTES = 65_536;

/** The hints a listed tool's annotations give, keeping only the four boolean hints. */
export function hintsOf(annotations: unknown): McpHints {
  const a = (typeof annotations === 'object' && annotations !== null ? annotations : {}) as Record<string, unknown>;
  const out: Record<string, boolean> = {};
  for (const k of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])
    if (typeof a[k] === 'boolean') out[k] = a[k];
  return out;
}

/** The declaration imported for `listed` from server `server`. */
export function importedDeclaration(
  server: string,
  listed: ListedTool,
  choices: ImportChoices = {},
): McpToolDeclaration {
  const hints = hintsOf(listed.annotations);
  const read = hints.readOnlyHint === true;
  const confirmed = hints.idempotentHint === true && (choices.confirmIdempotent ?? []).includes(listed.name);
  const safeName = listed.name.replace(/[^A-Za-z0-9_-]/g, '_');
  return {
    name: `${choices.prefix ?? `${server}_`}${safeName}`.slice(0, 64),
    mcpName: listed.name,
    version: 1,
    description: (listed.description ?? listed.name).slice(0, 4_096),
    inputSchema: (listed.inputSchema ?? { type: 'object' }) as { readonly [key: string]: Json },
    ...(listed.outputSchema !== undefined
      ? { outputSchema: listed.outputSchema as { readonly [key: string]: Json } }
      : {}),
    effect: read ? 'read' : 'write',
    contract: !read && confirmed ? 'idempotent_by_key' : 'none',
    approval: read || hints.destructiveHint === false ? 'none' : 'required',
    onToolError: 'unknown',
    hints,
    digest: toolDigest(listed),
    maxArgumentBytes: DEFAULT_MCP_MAX_BYTES,
    maxResultBytes: DEFAULT_MCP_MAX_BYTES,
  };
}
