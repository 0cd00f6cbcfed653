/** A service's read of one record, declared by its route pattern and a getter over the pattern's parameters. */
import type { Database } from 'better-sqlite3';
import type { ReadRoute } from './service-host';

/**
 * `ServiceDefinition.reads` for one `GET` route: `get` receives the pattern's path parameters in the order they
 * appear (a missing one reads as ''), e.g. `'/v1/stock/:tenant/:sku'` calls `get(db, tenant, sku)`. When `get`
 * returns undefined the route answers 404 with `notFound`.
 */
export function readRoute(
  pattern: string,
  get: (db: Database, ...params: string[]) => unknown,
  notFound: string,
): Readonly<Record<string, ReadRoute>> {
  const names = pattern
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) => segment.slice(1));
  return { [pattern]: { get: (db, params) => get(db, ...names.map((name) => params[name] ?? '')), notFound } };
}
