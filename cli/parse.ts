/**
 * Pure parsers for the values the run commands take on the command line. Each throws CliUsageError with a
 * one-line message naming the flag and what it expected.
 */
import { isServedStrategy, strategyNames, type RetryStrategy } from '../src/domain/retry-strategies';
import { CliUsageError } from './errors';

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `500ms`, `60s`, `1.5m`, `10m`, `1h`, `2d` → milliseconds (> 0). */
export function parseDuration(text: string, flag = 'duration'): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : NaN;
  if (!Number.isFinite(ms) || ms <= 0) {
    throw new CliUsageError(`${flag}: invalid duration "${text}" (use e.g. 500ms, 60s, 10m, 1h)`);
  }
  return Math.round(ms);
}

/**
 * A run deadline: a duration from `nowMs` (`60s`, `10m`) or an absolute ISO 8601 time with a zone. Returns the
 * ISO string. An absolute time in the past is refused.
 */
export function parseDeadline(text: string, nowMs: number): string {
  const t = text.trim();
  if (/^\d{4}-\d{2}-\d{2}T/.test(t)) {
    const at = Date.parse(t);
    if (!Number.isFinite(at) || !/(Z|[+-]\d{2}:?\d{2})$/.test(t)) {
      throw new CliUsageError(`--deadline: "${text}" is not an ISO 8601 time with a zone (e.g. 2030-01-01T12:00:00Z)`);
    }
    if (at <= nowMs) throw new CliUsageError(`--deadline: ${t} is in the past`);
    return new Date(at).toISOString();
  }
  return new Date(nowMs + parseDuration(t, '--deadline')).toISOString();
}

/** A principal `kind:name`, e.g. `user:alice`, `manager:carol`, `ops:bob`. */
export function parsePrincipal(text: string, flag = '--principal'): string {
  const t = text.trim();
  if (!/^[a-z][a-z0-9_-]*:[A-Za-z0-9._@+-]+$/.test(t)) {
    throw new CliUsageError(`${flag}: invalid principal "${text}" (expected kind:name, e.g. user:alice)`);
  }
  return t;
}

/** A tenant id: letters, digits, `.`, `_`, `-`. */
export function parseTenant(text: string): string {
  const t = text.trim();
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(t)) throw new CliUsageError(`--tenant: invalid tenant "${text}"`);
  return t;
}

export function parseStrategy(text: string): RetryStrategy {
  const t = text.trim();
  if (!isServedStrategy(t)) {
    throw new CliUsageError(`--strategy: unknown strategy "${text}" (one of ${strategyNames().join(', ')})`);
  }
  return t;
}

/** `SUCCEEDED` or `FAILED`, case-insensitive. */
export function parseOutcome(text: string): 'SUCCEEDED' | 'FAILED' {
  const t = text.trim().toUpperCase();
  if (t !== 'SUCCEEDED' && t !== 'FAILED')
    throw new CliUsageError(`--outcome: must be SUCCEEDED or FAILED, not "${text}"`);
  return t;
}

/** A positive integer no larger than `max`. */
export function parsePositiveInt(text: string, flag: string, max = 10_000): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw new CliUsageError(`${flag}: expected an integer from 1 to ${max}, not "${text}"`);
  }
  return n;
}

/** A non-empty trimmed string (reasons, model names, ids). */
export function parseNonEmpty(text: string, flag: string): string {
  const t = text.trim();
  if (t === '') throw new CliUsageError(`${flag}: must not be empty`);
  return t;
}

type VarTree = { [key: string]: unknown };

/** The value of `--var k=v`: JSON when it parses as JSON, else the text itself. `{`/`[` must be valid JSON. */
function varValue(key: string, raw: string): unknown {
  const looksJson = /^\s*[[{"]/.test(raw) || /^(true|false|null|-?\d+(\.\d+)?([eE][+-]?\d+)?)$/.test(raw.trim());
  if (!looksJson) return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch (err) {
    throw new CliUsageError(`--var ${key}: malformed JSON value: ${(err as Error).message}`);
  }
}

/**
 * `--var k=v` pairs into an object. Keys may be dotted (`amount.minor=1250 amount.currency=EUR`) to build nested
 * objects; values are JSON when they parse as such (`amount={"minor":1250,"currency":"EUR"}`), else strings.
 */
export function parseVars(pairs: readonly string[]): Record<string, unknown> {
  const out: VarTree = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (eq < 0 || !/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/.test(key)) {
      throw new CliUsageError(`--var: expected key=value (key letters, digits, _ and dots), got "${pair}"`);
    }
    const path = key.split('.');
    let node = out;
    for (const [i, part] of path.entries()) {
      if (i === path.length - 1) {
        if (part in node) throw new CliUsageError(`--var: ${key} is given twice`);
        node[part] = varValue(key, pair.slice(eq + 1));
        break;
      }
      const next = node[part];
      if (next === undefined) node = node[part] = {};
      else if (typeof next === 'object' && next !== null && !Array.isArray(next)) node = next as VarTree;
      else throw new CliUsageError(`--var: ${key} conflicts with ${path.slice(0, i + 1).join('.')} given as a value`);
    }
  }
  return out;
}

/** Collects a repeatable option into an array (commander's `(value, previous)` parser signature). */
export function collect(value: string, previous: readonly string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
