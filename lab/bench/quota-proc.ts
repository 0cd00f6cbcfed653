/**
 * One host's load on the quota store, as its own process (lab/bench/sections/quota-ceiling.ts starts 1, 2 or 3 at
 * once): `slots` reservation loops for ONE tenant and one action, each reserving a fresh slot as soon as the last
 * answered, for `ms` milliseconds, under the largest limit a policy may set (10,000 a minute). The store is the runtime's own (QuotaStore over
 * SQLite or PostgreSQL), every reservation one transaction under the tenant's lock, as the `reserveQuota` activity
 * makes it.
 *
 *   node -r tsx/cjs lab/bench/quota-proc.ts <host name> <slots> <ms>
 *
 * The store comes from the environment as a worker's does (LEDGERLOOP_QUOTA_URL, else LEDGERLOOP_QUOTA_DB; the URL
 * holds a password, so never the command line) and the tenant from BENCH_QUOTA_TENANT. Prints one JSON line:
 * { reserved, refused, failed, ms, perSecond (completed reservations in each whole second), latency p50 / p95 / max }.
 */
import { quotaStoreFromEnv } from '../../src/stores/quota-store-env';
import { percentile } from './lib/stats';

async function main(): Promise<void> {
  const [host, slotsArg, msArg] = process.argv.slice(2);
  const slots = Number(slotsArg);
  const ms = Number(msArg);
  const tenant = process.env.BENCH_QUOTA_TENANT;
  if (!host || !Number.isInteger(slots) || slots < 1 || !Number.isFinite(ms) || ms <= 0 || !tenant)
    throw new Error('usage: BENCH_QUOTA_TENANT=<t> quota-proc.ts <host name> <slots> <ms>');
  const store = quotaStoreFromEnv();
  if (!store) throw new Error('no quota store: set LEDGERLOOP_QUOTA_URL or LEDGERLOOP_QUOTA_DB');
  const scopes = [{ scope: `tenant:${tenant}`, action: 'wallet.debit', max: 10_000, perMs: 60_000 }];
  let reserved = 0;
  let refused = 0;
  let failed = 0;
  let n = 0;
  const latencies: number[] = [];
  const perSecond: number[] = [];
  const t0 = performance.now();
  const end = t0 + ms;
  const slot = async (): Promise<void> => {
    while (performance.now() < end) {
      const begun = performance.now();
      try {
        const d = await store.reserve(tenant, { reservationId: `${host}/${n++}`, scopes });
        if (d.ok) reserved += 1;
        else refused += 1;
      } catch {
        failed += 1;
      }
      const now = performance.now();
      latencies.push(now - begun);
      const second = Math.floor((now - t0) / 1000);
      perSecond[second] = (perSecond[second] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: slots }, slot));
  const took = performance.now() - t0;
  await store.close();
  console.log(
    JSON.stringify({
      reserved,
      refused,
      failed,
      ms: took,
      // Whole seconds only: the last, partial one would read as a slowdown.
      perSecond: Array.from({ length: Math.floor(ms / 1000) }, (_, i) => perSecond[i] ?? 0),
      latencyMs: {
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        max: Math.max(...latencies),
      },
    }),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
