/**
 * The checked-in declaration against the live listing. A call is sent only while the server lists the tool with
 * the digest the declaration was imported from: a tool that changed is refused until its declaration is updated
 * (`ledgerloop mcp import` again, reviewed and committed), and a tool the server no longer lists fails closed.
 */
import { toolDigest, type ListedTool } from '../../tools/mcp/digest';
import type { McpToolDeclaration } from '../../tools/mcp/tool-set';

export type DriftVerdict =
  | { readonly kind: 'matches' }
  /** The server lists the tool with another schema or other annotations. */
  | { readonly kind: 'changed'; readonly liveDigest: string }
  /** The server does not list the tool. */
  | { readonly kind: 'unlisted' }
  /** No listing has been read yet (the server never connected). */
  | { readonly kind: 'unknown' };

export function driftOf(
  decl: Pick<McpToolDeclaration, 'mcpName' | 'digest'>,
  listing: ReadonlyMap<string, ListedTool> | undefined,
): DriftVerdict {
  if (listing === undefined) return { kind: 'unknown' };
  const live = listing.get(decl.mcpName);
  if (live === undefined) return { kind: 'unlisted' };
  const liveDigest = toolDigest(live);
  return liveDigest === decl.digest ? { kind: 'matches' } : { kind: 'changed', liveDigest };
}

/** One sentence for a verdict that refuses, naming the tool and what to do. */
export function driftReason(
  server: string,
  decl: Pick<McpToolDeclaration, 'mcpName' | 'digest'>,
  v: DriftVerdict,
): string {
  const tool = `${server}.${decl.mcpName}`;
  switch (v.kind) {
    case 'matches':
      return `${tool} matches its declaration`;
    case 'changed':
      return `${tool} changed on the server (digest ${v.liveDigest.slice(0, 12)}, declared ${decl.digest.slice(0, 12)}): refused until its declaration is updated (ledgerloop mcp import); nothing was sent`;
    case 'unlisted':
      return `${server} no longer lists ${decl.mcpName}: refused; nothing was sent`;
    case 'unknown':
      return `${server} has not listed its tools yet: nothing was sent`;
  }
}
