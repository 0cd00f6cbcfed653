/**
 * The digest of a tool as a server lists it: what the checked-in declaration was imported from, compared with the
 * live listing when the worker connects (and whenever the server says its list changed). Pure: the import and the
 * worker compute it the same way.
 *
 * It covers what decides how a call behaves: the name, the input and output schemas and the annotations. The
 * server's description is left out on purpose: the model is offered the checked-in description, never the live one,
 * so a server that rewrites its description changes nothing a run sees.
 */
import { hashCanonical, type Json } from '../../domain/canonical';

/** A tool as `tools/list` returns it (the fields the digest reads). */
export interface ListedTool {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: unknown;
  readonly outputSchema?: unknown;
  readonly annotations?: unknown;
}

/** SHA-256 (hex) of the canonical JSON of the tool's name, schemas and annotations. */
export function toolDigest(tool: ListedTool): string {
  return hashCanonical({
    name: tool.name,
    inputSchema: (tool.inputSchema ?? null) as Json,
    outputSchema: (tool.outputSchema ?? null) as Json,
    annotations: (tool.annotations ?? null) as Json,
  });
}
