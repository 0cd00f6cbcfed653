/**
 * Canonical JSON (RFC 8785, JSON Canonicalization Scheme) and SHA-256, usable on both sides of the
 * determinism boundary: pure JavaScript, no Node built-ins, so workflow code can hash arguments itself.
 *
 * `canonicalize` is the RFC author's reference implementation; `@noble/hashes` is an audited pure-JS SHA-256.
 */
import canonicalizeJcs from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import { MAX_JSON_DEPTH } from './json-depth';

/** A JSON value as it may appear in canonical arguments. `undefined` is not JSON and is rejected. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export class CanonicalizationError extends Error {
  override readonly name = 'Canonicalization.Invalid';
}

/**
 * RFC 8785 canonical JSON text of `value`. Rejects, with `Canonicalization.Invalid`, values JSON cannot represent
 * exactly and values nested deeper than `MAX_JSON_DEPTH` (src/domain/json-depth.ts).
 */
export function canonicalJson(value: unknown): string {
  assertJson(value, '$');
  const text = canonicalizeJcs(value);
  if (text === undefined) throw new CanonicalizationError('value has no JSON representation');
  return text;
}

/** Lower-case hex SHA-256 of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

/** SHA-256 of the canonical JSON of `value`: the one way Ledgerloop hashes structured data. */
export function hashCanonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/**
 * Every value JSON can represent exactly, nested at most {@link MAX_JSON_DEPTH} deep. A loop over an explicit
 * stack: a value of any depth is refused here, typed, before `canonicalize` (which recurses) ever sees it.
 */
function assertJson(root: unknown, rootPath: string): void {
  const stack: Array<[unknown, string, number]> = [[root, rootPath, 0]];
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!;
    if (value === null || typeof value === 'string' || typeof value === 'boolean') continue;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw new CanonicalizationError(`${path}: non-finite number`);
      continue;
    }
    if (typeof value !== 'object') throw new CanonicalizationError(`${path}: ${typeof value} is not JSON`);
    if (depth >= MAX_JSON_DEPTH) throw new CanonicalizationError(`${path}: nests deeper than ${MAX_JSON_DEPTH} levels`);
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}[${i}]`, depth + 1]);
      continue;
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      throw new CanonicalizationError(`${path}: only plain objects are canonical (got ${describe(value)})`);
    }
    const entries = Object.entries(value as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i]!;
      if (item === undefined) throw new CanonicalizationError(`${path}.${key}: undefined is not JSON`);
      stack.push([item, `${path}.${key}`, depth + 1]);
    }
  }
}

function describe(value: object): string {
  return (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
}
