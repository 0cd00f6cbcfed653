/**
 * The one nesting limit on untrusted JSON, and the two checks that enforce it without recursion.
 *
 * A model proposal, a tool result, a downstream error, a signal, an update, a query argument and a run input are
 * all JSON someone else chose. Every walk Ledgerloop and its libraries make over such a value recurses (canonical
 * JSON, zod, `JSON.stringify`), and a value nested deep enough overflows the stack: a `RangeError` in workflow
 * code fails the workflow task, and every retry of it, so one proposal nested 60,000 deep used to wedge a run
 * (issue #39, hole 3). Measured on Node 20 (`node lab/bench/json-depth.ts`): `JSON.parse` is iterative and reads
 * any depth; `JSON.stringify` throws past about 4,000 levels on the main thread; canonicalization and zod throw
 * sooner. So the depth is checked first, here, by loops, and nothing deeper than {@link MAX_JSON_DEPTH} reaches
 * any of them.
 *
 * Imported by workflow code: no Node built-ins here.
 */

/**
 * How many levels of arrays and objects untrusted JSON may nest: 64. The deepest tool schema Ledgerloop ships
 * nests 3; real API responses rarely pass 20. 64 leaves room for those and stays two orders of magnitude under the
 * shallowest recursion limit measured (`JSON.stringify`, about 4,000 levels), so any walk over a value that passed
 * has stack to spare. A scalar has depth 0, `[]` and `{}` depth 1.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The nesting depth of JSON text, counting brackets outside strings, stopping as soon as it passes `limit`
 * (then it returns `limit + 1`). Linear, no recursion, no parsing: malformed text is measured as far as it goes,
 * and is left to the parser to refuse.
 */
export function textDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return limit + 1;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return deepest;
}

/**
 * The nesting depth of a value (arrays and objects; any other value counts as a leaf), stopping as soon as it
 * passes `limit` (then it returns `limit + 1`). An explicit stack, no recursion. A cycle is infinitely deep and
 * so passes any limit; a value shared many times is walked again only when it is met deeper than before, so a
 * DAG of shared references costs at most `limit` visits per node, never an exponential walk.
 */
export function valueDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  if (typeof value !== 'object' || value === null) return 0;
  const seenAt = new Map<object, number>();
  const stack: Array<[object, number]> = [[value, 1]];
  let deepest = 0;
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > limit) return limit + 1;
    const before = seenAt.get(node);
    if (before !== undefined && before >= depth) continue;
    seenAt.set(node, depth);
    if (depth > deepest) deepest = depth;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Why a value is refused for its depth, naming `what` and the limit; `undefined` when it is within it. */
export function tooDeep(value: unknown, what: string, limit = MAX_JSON_DEPTH): string | undefined {
  return valueDepth(value, limit) > limit ? `${what} nests deeper than ${limit} levels` : undefined;
}

/** The same for JSON text. */
export function textTooDeep(text: string, what: string, limit = MAX_JSON_DEPTH): string | undefined {
  return textDepth(text, limit) > limit ? `${what} nests deeper than ${limit} levels` : undefined;
}
