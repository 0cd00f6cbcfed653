/**
 * Canonical JSON (RFC 8785, JSON Canonicalization Scheme) and SHA-256, usable on both sides of the
 * determinism boundary: pure JavaScript, no Node built-ins, so workflow code can hash arguments itself.
 *
 * `canonicalJson` writes the text the RFC author's reference implementation (`canonicalize`) writes, in one walk
 * that also checks it; `@noble/hashes` is an audited pure-JS SHA-256.
 */
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
 *
 * One walk checks and writes: the same text as the RFC author's `canonicalize` (test/unit/canonical.test.ts
 * compares them on generated values), and the same refusal, naming the same path, as a check made before it.
 * Members are checked in their own order and written sorted by key (UTF-16 code units, as `Array#sort`); a path
 * is spelled only for a refusal. The depth is checked before each descent, so the recursion never passes
 * `MAX_JSON_DEPTH` levels, far under any stack limit.
 */
export function canonicalJson(value: unknown): string {
  return write(value, 0, []);
}

/** Lower-case hex SHA-256 of a UTF-8 string. */
export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

/** SHA-256 of the canonical JSON of `value`: the one way Ledgerloop hashes structured data. */
export function hashCanonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** Where the walk is: member names and array indices from the root, spelled only in a refusal. */
type Path = Array<string | number>;

function write(value: unknown, depth: number, at: Path): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw refusal(at, 'non-finite number');
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      throw refusal(at, `${typeof value} is not JSON`);
  }
  if (depth >= MAX_JSON_DEPTH) throw refusal(at, `nests deeper than ${MAX_JSON_DEPTH} levels`);
  if (Array.isArray(value)) return writeArray(value, depth, at);
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null)
    throw refusal(at, `only plain objects are canonical (got ${describe(value)})`);
  return writeObject(value as Record<string, unknown>, depth, at);
}

function writeArray(items: readonly unknown[], depth: number, at: Path): string {
  let out = '[';
  for (let i = 0; i < items.length; i++) {
    at.push(i);
    out += (i === 0 ? '' : ',') + write(items[i], depth + 1, at);
    at.pop();
  }
  return `${out}]`;
}

function writeObject(o: Record<string, unknown>, depth: number, at: Path): string {
  const keys = Object.keys(o);
  // A member left undefined is refused before any member is walked, the last one first (as the check did).
  for (let i = keys.length - 1; i >= 0; i--)
    if (o[keys[i]!] === undefined) throw refusal([...at, keys[i]!], 'undefined is not JSON');
  const members: Array<[string, string]> = [];
  for (const key of keys) {
    at.push(key);
    members.push([key, `${JSON.stringify(key)}:${write(o[key], depth + 1, at)}`]);
    at.pop();
  }
  members.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let out = '{';
  for (let i = 0; i < members.length; i++) out += (i === 0 ? '' : ',') + members[i]![1];
  return `${out}}`;
}

function refusal(at: Path, why: string): CanonicalizationError {
  let path = '$';
  for (const part of at) path += typeof part === 'number' ? `[${part}]` : `.${part}`;
  return new CanonicalizationError(`${path}: ${why}`);
}

function describe(value: object): string {
  return (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
}
