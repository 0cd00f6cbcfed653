/**
 * The quota's ceiling: how many debits per second ONE tenant's cross-run limit can admit. Every reservation of a
 * tenant is one transaction holding that tenant's lock in the quota store (src/stores/quota-store.ts: SQLite on one
 * host, PostgreSQL on the cluster), which reads the tenant's windows, adds the slot and writes them back, so one
 * tenant's reservations are serialized whatever the number of workers: their rate is the ceiling of a tenant's
 * rate-limited calls. Measured with the runtime's own store, 1, 2 and 3 host processes at once
 * (lab/bench/quota-proc.ts), each with `slots` reservation loops for one tenant, under the largest limit a policy may set (10,000 a minute; a refusal is counted):
 * admitted reservations per second in all, per second of the run (the window holds every slot of its last minute,
 * so the state each transaction reads and writes grows as the run goes on), and the latency of one reservation.
 */
import path from 'node:path';
import { runJsonChild } from '../lib/child-json';
import { median, round } from '../lib/stats';
import { QUOTA_DB_ENV, QUOTA_URL_ENV } from '../../../src/stores/quota-store';
import type { BenchContext } from './common';

export interface QuotaCeilingCase {
  readonly hosts: number;
  readonly slotsPerHost: number;
  readonly seconds: number;
  readonly reserved: number;
  readonly refused: number;
  readonly failed: number;
  /** Admitted reservations per second, all hosts together. */
  readonly perSecond: number;
  /** All hosts together, each whole second of the run. */
  readonly bySecond: readonly number[];
  /** One reservation, median over the hosts of their p50 and p95 (ms). */
  readonly latencyMs: { readonly p50: number; readonly p95: number };
}

export interface QuotaCeilingFigures {
  /** `sqlite` (a file of one host, the dev target) or `postgres` (the cluster's database). */
  readonly store: string;
  readonly cases: readonly QuotaCeilingCase[];
}

interface HostResult {
  readonly reserved: number;
  readonly refused: number;
  readonly failed: number;
  readonly ms: number;
  readonly perSecond: readonly number[];
  readonly latencyMs: { readonly p50: number; readonly p95: number; readonly max: number };
}

export async function measureQuotaCeiling(
  ctx: BenchContext,
  opts: { readonly hosts?: readonly number[] } = {},
): Promise<QuotaCeilingFigures> {
  const url = ctx.stack.server.quotaUrl;
  const store = url ? 'postgres' : 'sqlite';
  const env: Record<string, string> = url
    ? { [QUOTA_URL_ENV]: url }
    : { [QUOTA_DB_ENV]: path.join(ctx.stack.dir, 'quota-ceiling.db') };
  const seconds = ctx.quick ? 3 : 10;
  const slotsPerHost = 4;
  const cases: QuotaCeilingCase[] = [];
  for (const hosts of opts.hosts ?? [1, 2, 3]) {
    // A tenant of its own per case: each starts from empty windows.
    const tenant = `bench-ceiling-${hosts}-${ctx.stamp}`;
    const results = await Promise.all(
      Array.from({ length: hosts }, (_, i) =>
        runJsonChild<HostResult>(
          path.join(__dirname, '..', 'quota-proc.ts'),
          [`h${i}`, String(slotsPerHost), String(seconds * 1000)],
          ['-r', 'tsx/cjs'],
          `quota-proc h${i} of ${hosts}`,
          { ...env, BENCH_QUOTA_TENANT: tenant },
        ),
      ),
    );
    const sum = (f: (r: HostResult) => number): number => results.reduce((n, r) => n + f(r), 0);
    const reserved = sum((r) => r.reserved);
    const c: QuotaCeilingCase = {
      hosts,
      slotsPerHost,
      seconds,
      reserved,
      refused: sum((r) => r.refused),
      failed: sum((r) => r.failed),
      perSecond: round(reserved / (Math.max(...results.map((r) => r.ms)) / 1000), 1),
      bySecond: Array.from({ length: seconds }, (_, s) => sum((r) => r.perSecond[s] ?? 0)),
      latencyMs: {
        p50: round(median(results.map((r) => r.latencyMs.p50)), 1),
        p95: round(median(results.map((r) => r.latencyMs.p95)), 1),
      },
    };
    cases.push(c);
    ctx.log(
      `quota ceiling (${store}), ${hosts} host(s) x ${slotsPerHost} slots for one tenant: ${c.perSecond} reservations/s ` +
        `(${c.reserved} in ${seconds} s; by second ${c.bySecond.join(', ')}), p50 ${c.latencyMs.p50} ms, p95 ${c.latencyMs.p95} ms` +
        (c.failed || c.refused ? `; ${c.failed} failed, ${c.refused} refused` : ''),
    );
  }
  return { store, cases };
}
