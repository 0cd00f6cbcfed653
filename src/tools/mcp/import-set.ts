/**
 * A tool set as `ledgerloop mcp import` writes it: the server's listing merged with the checked-in file, if any.
 * What the team wrote is kept; only what the server owns is refreshed, and each change is reported for review:
 *
 * - a tool new on the server gets the defaults of import-defaults.ts (`added`);
 * - a tool whose digest changed gets the live schemas, hints and digest, and its version bumped (the operation key
 *   changes with it), keeping the team's effect, contract, approval and lookup (`changed`: review them);
 * - a tool the server no longer lists is dropped from the file (`removed`); until the file is updated, the worker
 *   refuses it anyway (src/downstream/mcp/drift.ts).
 * Pure: the CLI reads the listing and the file, and writes the result.
 */
import type { ListedTool } from './digest';
import { importedDeclaration, type ImportChoices } from './import-defaults';
import { MCP_TOOL_SET_FORMAT, type McpToolDeclaration, type McpToolSet } from './tool-set';

export interface ImportReport {
  readonly set: McpToolSet;
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
  readonly unchanged: readonly string[];
}

export function importToolSet(
  server: string,
  listing: ReadonlyMap<string, ListedTool>,
  existing: McpToolSet | undefined,
  choices: ImportChoices & { readonly serverInfo?: { readonly name: string; readonly version: string } } = {},
): ImportReport {
  const before = new Map((existing?.tools ?? []).map((t) => [t.mcpName, t]));
  const added: string[] = [];
  const changed: string[] = [];
  const unchanged: string[] = [];
  const tools: McpToolDeclaration[] = [];
  for (const listed of [...listing.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const fresh = importedDeclaration(server, listed, choices);
    const kept = before.get(listed.name);
    if (kept === undefined) {
      added.push(listed.name);
      tools.push(fresh);
    } else if (kept.digest === fresh.digest) {
      unchanged.push(listed.name);
      tools.push(kept);
    } else {
      changed.push(listed.name);
      const { outputSchema: _old, ...rest } = kept;
      tools.push({
        ...rest,
        inputSchema: fresh.inputSchema,
        ...(fresh.outputSchema !== undefined ? { outputSchema: fresh.outputSchema } : {}),
        hints: fresh.hints,
        digest: fresh.digest,
        version: kept.version + 1,
      });
    }
  }
  const removed = [...before.keys()].filter((name) => !listing.has(name)).sort();
  const set: McpToolSet = {
    format: MCP_TOOL_SET_FORMAT,
    server,
    ...(choices.serverInfo !== undefined ? { serverInfo: choices.serverInfo } : {}),
    ...(existing?.keyRetentionMs !== undefined ? { keyRetentionMs: existing.keyRetentionMs } : {}),
    tools,
  };
  return { set, added, changed, removed, unchanged };
}
