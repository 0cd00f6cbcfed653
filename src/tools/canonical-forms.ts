/**
 * Canonicalization helpers for tool declarations: the canonical form is what is hashed into the operation key
 * and sent downstream, so two spellings of one intent must give one form. Pure and deterministic (they run in
 * the workflow sandbox): no clock, no locale, no randomness.
 */
import { z } from 'zod';
import { CanonicalizationError } from '../domain/canonical';
import type { Money } from '../domain/money';

/** Money as integer minor units and an ISO 4217 code, with nothing else carried along. */
export function canonicalMoney(m: Money): { minor: number; currency: string } {
  if (!Number.isSafeInteger(m.minor)) throw new CanonicalizationError('money must be integer minor units');
  if (!/^[A-Z]{3}$/.test(m.currency)) throw new CanonicalizationError('money needs an ISO 4217 currency code');
  return { minor: m.minor, currency: m.currency };
}

/** NFC-normalized and trimmed: `"Cafe\u0301 "` and `"Café"` are one string. */
export function nfc(text: string): string {
  return text.normalize('NFC').trim();
}

/** Order by UTF-16 code units, as RFC 8785 orders keys: never by locale. */
function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A set of strings in one order: each NFC-normalized and trimmed, duplicates dropped, sorted by code units. */
export function sortedSet(items: readonly string[]): string[] {
  return [...new Set(items.map(nfc))].sort(byCodeUnits);
}

/**
 * A set of records in one order, by a key each record has: sorted by code units of the key. Two records with
 * one key are ambiguous (which one is meant?) and refused with `Canonicalization.Invalid`.
 */
export function sortedSetBy<T>(items: readonly T[], keyOf: (item: T) => string): T[] {
  const keyed = items.map((item) => ({ key: nfc(keyOf(item)), item }));
  keyed.sort((a, b) => byCodeUnits(a.key, b.key));
  for (let i = 1; i < keyed.length; i++) {
    if (keyed[i]?.key === keyed[i - 1]?.key) throw new CanonicalizationError(`duplicate set member ${keyed[i]?.key}`);
  }
  return keyed.map((k) => k.item);
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(:\d{2}(\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2}))$/;

/** A date-time that exists: V8's `Date.parse` rolls 2026-02-30 over to March 2, so the fields are checked. */
function isRealDateTime(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (m === null) return false;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetOk = m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && offsetOk;
}

/** An ISO 8601 date-time with an explicit zone offset (`Z` or `+01:00`): a time without one is ambiguous. */
export const ZonedDateTime = z
  .string()
  .refine(isRealDateTime, 'an ISO 8601 date-time with a zone offset, e.g. 2026-12-01T09:00:00+01:00');

/** An IANA time zone name such as `Europe/Berlin`, or `UTC`. */
export const TimeZone = z
  .string()
  .regex(/^(UTC|[A-Z][A-Za-z_-]+(\/[A-Za-z0-9_+-]+){1,2})$/, 'an IANA time zone such as Europe/Berlin');

/**
 * A zoned time's canonical form: the instant in UTC with milliseconds, and the zone it is meant in.
 * `2026-12-01T10:00+01:00` and `2026-12-01T09:00:00.000Z` in `Europe/Berlin` are one intent.
 */
export function zonedTime(at: string, zone: string): { at: string; zone: string } {
  if (!isRealDateTime(at)) {
    throw new CanonicalizationError(`${JSON.stringify(at.slice(0, 40))} is not a date-time with a zone offset`);
  }
  if (!TimeZone.safeParse(zone).success) {
    throw new CanonicalizationError(`${JSON.stringify(zone.slice(0, 40))} is not an IANA time zone`);
  }
  return { at: new Date(Date.parse(at)).toISOString(), zone };
}
