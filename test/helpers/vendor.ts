/**
 * The vendor payments server (services/vendor-payments) in its own process, for the tests: spawned on a fresh
 * SQLite file, with its admin listener (faults, clock, stats), and its effects counted from its own database.
 */
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { packageModule } from '../../src/package-paths';
import { spawnServiceEntry, type SpawnedService } from '../../services/spawn';
import type { VendorFaultRule } from '../../services/vendor-payments/faults';

export const VENDOR_API_KEY = 'sk_test_vendor_0123456789abcdef';

export interface Vendor {
  readonly url: string;
  readonly dbPath: string;
  readonly service: SpawnedService;
  admin(method: string, route: string, body?: unknown): Promise<unknown>;
  arm(rule: Partial<VendorFaultRule> & Pick<VendorFaultRule, 'at' | 'do'>): Promise<void>;
  /** Rows in the vendor's own tables, read from its database file. */
  count(table: 'charges' | 'refunds', where?: { metadataKey: string; value: string }): number;
  stop(): Promise<void>;
}

export async function spawnVendor(
  dir: string,
  opts: { searchLagMs?: number; name?: string; port?: number } = {},
): Promise<Vendor> {
  const dbPath = path.join(dir, `${opts.name ?? 'vendor'}.db`);
  const service = await spawnServiceEntry('vendor-payments', packageModule('services', 'vendor-payments', 'main'), {
    dbPath,
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    env: { VENDOR_PAYMENTS_API_KEY: VENDOR_API_KEY },
    extraArgs: ['--search-lag-ms', String(opts.searchLagMs ?? 0)],
  });
  const admin = async (method: string, route: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${service.adminUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${service.adminToken}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`admin ${method} ${route}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  return {
    url: service.url,
    dbPath,
    service,
    admin,
    arm: async (rule) => void (await admin('POST', '/admin/faults', rule)),
    count(table, where) {
      const db = new BetterSqlite3(dbPath, { readonly: true, fileMustExist: true });
      try {
        const sql = where
          ? `SELECT count(*) AS n FROM ${table} WHERE json_extract(metadata, ?) = ?`
          : `SELECT count(*) AS n FROM ${table}`;
        const row = (where ? db.prepare(sql).get(`$."${where.metadataKey}"`, where.value) : db.prepare(sql).get()) as {
          n: number;
        };
        return row.n;
      } finally {
        db.close();
      }
    },
    stop: () => service.stop(),
  };
}

/** One request to the vendor's public API with its API key. */
export async function vendorRequest(
  vendor: Vendor,
  method: string,
  route: string,
  form?: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; replayed: boolean }> {
  const res = await fetch(`${vendor.url}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${VENDOR_API_KEY}`,
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...headers,
    },
    ...(form ? { body: new URLSearchParams(form).toString() } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    replayed: res.headers.get('idempotent-replayed') === 'true',
  };
}
