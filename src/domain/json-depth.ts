/**
 * The one nesting limit on untrusted JSON, and the two checks that enforce it without recursion.
 *
 * A model proposal, a tool result, a downstream error, a signal, an update, a query argument and a run input are
 * all JSON someone else chose. Every walk Ledgerloop and its libraries make over such a value recurses (canonical
 * JSON, zod, `JSON.stringify`), and a value nested deep enough overflows the stack: a `RangeError` in workflow
 * code fails the workflow task, and every retry of it, so one proposal nested 60,000 deep used to wedge a run
 * (issue #39, hole 3). Measured on Node 20.20 (`node -r tsx/cjs lab/bench/json-depth.ts`): `JSON.parse` is
 * iterative and read 1,000,000 levels; on the main thread (activities) `JSON.stringify` threw past 4,182,
 * `canonicalize` past 2,457 and a recursive zod schema past 1,953; in a worker thread (workflow code) past 16,562,
 * 9,375 and 8,422. So the depth is checked first, here, by loops, and nothing deeper than {@link MAX_JSON_DEPTH} reaches
 * any of them.
 *
 * Imported by workflow code: no Node built-ins here.
 */

/**
 * How many levels of arrays and objects untrusted JSON may nest: 64. The tool schemas Ledgerloop ships nest a
 * few levels; 64 leaves room for deeper API results and stays 30 times under the shallowest
 * recursion limit measured (zod, 1,953 levels on the main thread), so any walk over a value that passed, and what
 * wraps it, has stack to spare. A scalar has depth 0, `[]` and `{}` depth 1.
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

/** How many leading path segments a refusal names: enough to find the field, never the whole nest. */
const NAMED_SEGMENTS = 4;

/** A value's depth (capped at `limit + 1`) and, when it passes `limit`, the field it passes it under. */
export interface ValueDepth {
  readonly depth: number;
  /** The first {@link NAMED_SEGMENTS} segments of the path to the first part nested too deep (`planner.vars.x`). */
  readonly at?: string;
}

/**
 * The nesting depth of a value (arrays and objects; any other value counts as a leaf), stopping as soon as it
 * passes `limit`. An explicit stack, no recursion. A cycle is infinitely deep and so passes any limit; a value
 * shared many times is walked again only when it is met deeper than before, so a DAG of shared references costs
 * at most `limit` visits per node, never an exponential walk.
 */
export function measureDepth(value: unknown, limit = MAX_JSON_DEPTH): ValueDepth {
  if (typeof value !== 'object' || value === null) return { depth: 0 };
  const seenAt = new Map<object, number>();
  const stack: Array<[object, number, string]> = [[value, 1, '']];
  let deepest = 0;
  while (stack.length > 0) {
    const [node, depth, at] = stack.pop()!;
    if (depth > limit) return { depth: limit + 1, at: at === '' ? '(root)' : at };
    const before = seenAt.get(node);
    if (before !== undefined && before >= depth) continue;
    seenAt.set(node, depth);
    if (depth > deepest) deepest = depth;
    const named = depth <= NAMED_SEGMENTS;
    const entries: Array<[string, unknown]> = Array.isArray(node)
      ? node.map((v, i) => [`[${i}]`, v])
      : Object.entries(node).map(([k, v]) => [at === '' ? k : `.${k}`, v]);
    for (const [segment, child] of entries)
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1, named ? `${at}${segment}` : at]);
  }
  return { depth: deepest };
}

/** The nesting depth of a value, capped at `limit + 1` (see {@link measureDepth}). */
export function valueDepth(value: unknown, limit = MAX_JSON_DEPTH): number {
  return measureDepth(value, limit).depth;
}

/** Why `what` is refused for its depth, naming the field and the limit; `undefined` when it is within it. */
export function tooDeep(value: unknown, what: string, limit = MAX_JSON_DEPTH): string | undefined {
  const m = measureDepth(value, limit);
  return m.depth > limit ? `${what} nests deeper than ${limit} levels (under ${m.at})` : undefined;
}

/** The same for JSON text. */
export function textTooDeep(text: string, what: string, limit = MAX_JSON_DEPTH): string | undefined {
  return textDepth(text, limit) > limit ? `${what} nests deeper than ${limit} levels` : undefined;
}

/** The one key of {@link TooDeepMarker}: no downstream's answer has a reason to use it. */
export const TOO_DEEP_KEY = 'ledgerloop:tooDeep';

/** How many characters of the path a marker keeps: the path is made of the downstream's keys (untrusted). */
const MARKER_PATH_CHARS = 200;

/**
 * What a downstream's answer nested deeper than {@link MAX_JSON_DEPTH} is replaced by, where it leaves its transport
 * (src/downstream/depth-guard.ts) and before anything serializes it: shallow, typed, and refused by settle as
 * `Result.Invalid` (the effect happened; its answer cannot be read).
 */
export interface TooDeepMarker {
  readonly [TOO_DEEP_KEY]: { readonly limit: number; readonly at: string };
}

/** `value`, or its {@link TooDeepMarker} when it nests deeper than `limit` (a cycle does). Never recurses. */
export function shallowOrMarker(value: unknown, limit = MAX_JSON_DEPTH): unknown {
  const m = measureDepth(value, limit);
  if (m.depth <= limit) return value;
  const marker: TooDeepMarker = { [TOO_DEEP_KEY]: { limit, at: (m.at ?? '(root)').slice(0, MARKER_PATH_CHARS) } };
  return marker;
}

/** Whether `value` is a {@link TooDeepMarker}. */
export function isTooDeepMarker(value: unknown): value is TooDeepMarker {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const inner = (value as Record<string, unknown>)[TOO_DEEP_KEY];
  return typeof inner === 'object' && inner !== null && Object.keys(value).length === 1;
}
