/**
 * An MCP tool result as the workflow receives it: untrusted data, bounded before it is recorded. Text blocks are
 * joined, structured content is kept as JSON, and every other block (an image, audio, an embedded resource, a
 * link) is counted by type and never carried: its bytes would only weigh on history, and the model needs none of
 * them. The workflow checks the result against the declared schema (src/tools/mcp/declare.ts).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Json } from '../../domain/canonical';
import { shallowOrMarker } from '../../domain/json-depth';
import type { McpAnswerBody } from '../../tools/mcp/declare';

/** A result larger than the tool's limit is withheld: what the workflow receives instead (fails its schema). */
export interface WithheldResult {
  readonly withheld: string;
}

/** The answer body of `result`, or a withheld marker when its JSON exceeds `maxBytes`. */
export function answerBody(result: CallToolResult, maxBytes: number): McpAnswerBody | WithheldResult {
  const texts: string[] = [];
  const blocks: Record<string, number> = {};
  for (const block of Array.isArray(result.content) ? result.content : []) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else blocks[block.type] = (blocks[block.type] ?? 0) + 1;
  }
  const body: McpAnswerBody = {
    isError: result.isError === true,
    text: texts.join('\n'),
    blocks,
    // The depth first, by a loop: the size below is measured by `JSON.stringify`, which recurses.
    ...(result.structuredContent !== undefined
      ? { structured: shallowOrMarker(result.structuredContent) as Json }
      : {}),
  };
  const bytes = Buffer.byteLength(JSON.stringify(body), 'utf8');
  if (bytes > maxBytes) return { withheld: `a result of ${bytes} bytes exceeds the tool's limit of ${maxBytes}` };
  return body;
}
