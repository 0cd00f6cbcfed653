/**
 * Canonical JSON (RFC 8785, JSON Canonicalization Scheme) and SHA-256, usable on both sides of the
 * determinism boundary: pure JavaScript, no Node built-ins, so workflow code can hash arguments itself.
 *
 * `canonicalize` is the RFC author's reference implementation; `@noble/hashes` is an audited pure-JS SHA-256.
 */
import canonicalizeJcs from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';

/** A JSON value as it may appear in canonical arguments. `undefined` is not JSON and is rejected. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export class CanonicalizationError extends Error {
  override readonly name = 'Canonicalization.Invalid';
}

/** RFC 8785 canonical JSON text of `value`. Rejects values JSON cannot represent exactly. */
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

function assertJson(value: unknown, path: string): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new CanonicalizationError(`${path}: non-finite number`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => assertJson(item, `${path}[${i}]`));
    return;
  }
  if (typeof value === 'object') {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      throw new CanonicalizationError(`${path}: only plain objects are canonical (got ${describe(value)})`);
    }
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (item === undefined) throw new CanonicalizationError(`${path}.${key}: undefined is not JSON`);
      assertJson(item, `${path}.${key}`);
    }
    return;
  }
  throw new CanonicalizationError(`${path}: ${typeof value} is not JSON`);
}

function describe(value: object): string {
  return (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
}
