/**
 * A `structuredClone` for the workflow sandbox, which has none: `@openai/agents-core`'s `tool()` clones each
 * tool's JSON schema with it. It copies what the structured clone algorithm copies for plain data (primitives,
 * arrays, plain objects, `Date`, `RegExp`, `Map`, `Set`, boxed primitives, shared and cyclic references kept as
 * such) and refuses what the algorithm refuses (functions, symbols, class instances it does not know) with a
 * `DataCloneError`, so nothing is silently dropped. Deterministic: no I/O, no time, no randomness.
 */

/** What `structuredClone` throws for a value it cannot copy (the DOM's `DOMException` name). */
export class DataCloneError extends Error {
  override readonly name = 'DataCloneError';
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function copy(value: unknown, seen: Map<object, unknown>): unknown {
  if (typeof value === 'function') throw new DataCloneError(`${value.name || 'a function'} could not be cloned`);
  if (typeof value === 'symbol') throw new DataCloneError(`${String(value)} could not be cloned`);
  if (value === null || typeof value !== 'object') return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) if (i in value) out[i] = copy(value[i], seen);
    out.length = value.length;
    return out;
  }
  if (value instanceof Date) return remember(seen, value, new Date(value.getTime()));
  if (value instanceof RegExp) return remember(seen, value, new RegExp(value.source, value.flags));
  if (value instanceof Boolean || value instanceof Number || value instanceof String)
    return remember(seen, value, Object(value.valueOf()) as object);
  if (value instanceof Map) {
    const out = new Map<unknown, unknown>();
    seen.set(value, out);
    for (const [k, v] of value) out.set(copy(k, seen), copy(v, seen));
    return out;
  }
  if (value instanceof Set) {
    const out = new Set<unknown>();
    seen.set(value, out);
    for (const v of value) out.add(copy(v, seen));
    return out;
  }
  if (value instanceof Error) {
    const out = new Error(value.message);
    out.name = value.name;
    return remember(seen, value, out);
  }
  if (!isPlainObject(value))
    throw new DataCloneError(`an instance of ${value.constructor?.name ?? 'an unknown class'} could not be cloned`);
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  for (const key of Object.keys(value)) out[key] = copy((value as Record<string, unknown>)[key], seen);
  return out;
}

function remember<T>(seen: Map<object, unknown>, from: object, to: T): T {
  seen.set(from, to);
  return to;
}

/** The copy of `value` (see the module comment). The `options` (transfer lists) are not supported and refused. */
export function sandboxStructuredClone<T>(value: T, options?: { readonly transfer?: readonly unknown[] }): T {
  if (options?.transfer && options.transfer.length > 0)
    throw new DataCloneError('transfer lists cannot be used in a workflow');
  return copy(value, new Map()) as T;
}
