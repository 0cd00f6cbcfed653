import BetterSqlite3, { type Database } from 'better-sqlite3';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { BusinessRejection, IdempotencyStore, type ApplyEffect } from '../../services/idempotency-store';

const HASH_A = 'a'.repeat(64);
const HASH_B = 'b'.repeat(64);
const SCOPE = 'test.charge';
const T = 'acme';

/** A business effect that inserts one row into `ledger` and returns a sequential receipt. */
function charge(amount: number): ApplyEffect {
  return (db) => {
    const info = db.prepare('INSERT INTO ledger (amount) VALUES (?)').run(amount);
    const receipt = `r_${info.lastInsertRowid}`;
    return { receipt, result: { receipt, amount } };
  };
}

function reject(reason: string): ApplyEffect {
  return (db) => {
    db.prepare('INSERT INTO ledger (amount) VALUES (?)').run(-1); // must be rolled back
    throw new BusinessRejection(reason, `refused: ${reason}`);
  };
}

describe('IdempotencyStore', () => {
  let db: Database;
  let now: number;
  let store: IdempotencyStore;
  const ledgerRows = (): number => (db.prepare('SELECT count(*) AS n FROM ledger').get() as { n: number }).n;
  /** A request whose intent was recorded now (`intentAtMs` moves with the test clock unless given). */
  const req = (key: string, argumentsHash = HASH_A, fence = 0, intentAtMs = now) => ({
    tenant: T,
    key,
    argumentsHash,
    fence,
    scope: SCOPE,
    intentAtMs,
  });

  beforeEach(() => {
    db = new BetterSqlite3(':memory:');
    db.exec('CREATE TABLE ledger (id INTEGER PRIMARY KEY AUTOINCREMENT, amount INTEGER NOT NULL)');
    now = Date.parse('2026-01-01T00:00:00Z');
    store = new IdempotencyStore({ db, retentionMs: 1_000, now: () => now });
  });
  afterEach(() => db.close());

  it('records are per tenant: the same key under two tenants is two records, and a lookup never crosses', () => {
    expect(store.runIdempotent(req('k1'), charge(100)).kind).toBe('completed');
    expect(store.lookup('globex', 'k1')).toEqual({ kind: 'not_found', sealed: false });
    expect(store.runIdempotent({ ...req('k1'), tenant: 'globex' }, charge(100)).kind).toBe('completed');
    expect(ledgerRows()).toBe(2);
    expect(store.lookup('globex', 'k1', { seal: true })).toMatchObject({ kind: 'found' });
    expect(store.lookup('initech', 'k1', { seal: true })).toEqual({ kind: 'not_found', sealed: true });
    expect(store.lookup(T, 'k1')).toMatchObject({ kind: 'found', record: { status: 'completed' } });
  });

  it('refusal counters are bounded: an unknown code is counted as other', () => {
    for (let i = 0; i < 5; i++) store.countRefusal(`Made.Up.${i}`);
    store.countRefusal(DownstreamErrorCode.CapabilityInvalid);
    store.countRefusal(DownstreamErrorCode.CapabilityInvalid, 'lookup');
    expect(store.refusals()).toEqual({
      total: 7,
      mutations: 6,
      lookups: 1,
      byCode: {
        other: 5,
        [DownstreamErrorCode.CapabilityInvalid]: 1,
        [`lookup:${DownstreamErrorCode.CapabilityInvalid}`]: 1,
      },
    });
  });

  it('migrates a pre-tenant database in place: records keep their rows under tenant "" and the new key applies', () => {
    const old = new BetterSqlite3(':memory:');
    old.exec(`CREATE TABLE idem_records (operation_key TEXT PRIMARY KEY, arguments_hash TEXT NOT NULL, scope TEXT NOT NULL,
      status TEXT NOT NULL, result_json TEXT, error_json TEXT, receipt TEXT, fence INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
      CREATE TABLE idem_requests (id INTEGER PRIMARY KEY AUTOINCREMENT, operation_key TEXT NOT NULL, arguments_hash TEXT NOT NULL,
      fence INTEGER NOT NULL, received_at INTEGER NOT NULL, outcome TEXT NOT NULL);
      INSERT INTO idem_records VALUES ('old', '${HASH_A}', 's', 'completed', 'null', NULL, 'r', 0, 1, ${now + 10_000});
      INSERT INTO idem_requests (operation_key, arguments_hash, fence, received_at, outcome) VALUES ('old', '${HASH_A}', 0, 1, 'completed');`);
    const migrated = new IdempotencyStore({ db: old, retentionMs: 1_000, now: () => now });
    expect(migrated.lookup('', 'old')).toMatchObject({ kind: 'found' });
    expect(migrated.lookup(T, 'old')).toEqual({ kind: 'not_found', sealed: false });
    expect(migrated.stats('old').dispatchCount).toBe(1);
    old.close();
  });

  it('replays the retained result for the same key and arguments, with one effect and two dispatches', () => {
    const first = store.runIdempotent(req('k1'), charge(100));
    const second = store.runIdempotent(req('k1'), charge(100));
    expect(first.kind).toBe('completed');
    expect(second.kind).toBe('replayed');
    if (first.kind !== 'completed' || second.kind !== 'replayed') throw new Error('unreachable');
    expect(second.record.result).toEqual(first.record.result);
    expect(second.record.receipt).toBe(first.record.receipt);
    expect(ledgerRows()).toBe(1);
    expect(store.stats('k1')).toEqual({ key: 'k1', prefix: false, dispatchCount: 2, businessEffectCount: 1 });
  });

  it('refuses the same key with other arguments and records no effect for it', () => {
    store.runIdempotent(req('k1'), charge(100));
    const other = store.runIdempotent(req('k1', HASH_B), charge(999));
    expect(other).toMatchObject({ kind: 'conflict', code: DownstreamErrorCode.ArgumentsMismatch });
    expect(ledgerRows()).toBe(1);
    expect(store.stats('k1').businessEffectCount).toBe(1);
    expect(store.stats('k1').dispatchCount).toBe(2);
  });

  it('refuses the same key under another scope as an arguments mismatch', () => {
    store.runIdempotent(req('k1'), charge(100));
    expect(store.begin({ ...req('k1'), scope: 'test.refund' })).toMatchObject({
      kind: 'conflict',
      code: DownstreamErrorCode.ArgumentsMismatch,
    });
  });

  it('answers in-progress while the first request is between its two phases, then completes once', () => {
    const begun = store.begin(req('k1'));
    if (begun.kind !== 'proceed') throw new Error(`expected proceed, got ${begun.kind}`);
    expect(store.begin(req('k1'))).toMatchObject({ kind: 'conflict', code: DownstreamErrorCode.InProgress });
    expect(store.lookup(T, 'k1')).toMatchObject({ kind: 'found', record: { status: 'in_progress' } });
    expect(store.commit(begun.pending, charge(100)).kind).toBe('completed');
    expect(store.begin(req('k1')).kind).toBe('replayed');
    expect(ledgerRows()).toBe(1);
  });

  it('retains a business rejection as a failed record, commits nothing, and returns it again', () => {
    const first = store.runIdempotent(req('k1'), reject('Test.Insufficient'));
    expect(first).toMatchObject({
      kind: 'failed',
      record: { status: 'failed', error: { error: DownstreamErrorCode.Rejected, reason: 'Test.Insufficient' } },
    });
    const again = store.runIdempotent(req('k1'), charge(100));
    expect(again).toMatchObject({ kind: 'retained_failure', record: { status: 'failed' } });
    expect(ledgerRows()).toBe(0);
    expect(store.stats('k1')).toMatchObject({ dispatchCount: 2, businessEffectCount: 0 });
  });

  it('rolls back an unexpected error completely, so a retry with the key proceeds', () => {
    const boom: ApplyEffect = (d) => {
      d.prepare('INSERT INTO ledger (amount) VALUES (1)').run();
      throw new Error('disk on fire');
    };
    expect(() => store.runIdempotent(req('k1'), boom)).toThrow('disk on fire');
    expect(ledgerRows()).toBe(0);
    expect(store.lookup(T, 'k1')).toEqual({ kind: 'not_found', sealed: false });
    expect(store.runIdempotent(req('k1'), charge(5)).kind).toBe('completed');
  });

  it('aborting an in-progress record leaves nothing, so the same key proceeds normally afterwards', () => {
    const begun = store.begin(req('k1'));
    if (begun.kind !== 'proceed') throw new Error('expected proceed');
    store.abort(begun.pending, 'injected_unavailable');
    expect(store.lookup(T, 'k1')).toEqual({ kind: 'not_found', sealed: false });
    expect(store.runIdempotent(req('k1'), charge(100)).kind).toBe('completed');
    expect(store.stats('k1')).toMatchObject({ dispatchCount: 2, businessEffectCount: 1 });
  });

  it('a lookup with seal on a missing key makes every later request under it fail with KeySealed', () => {
    expect(store.lookup(T, 'k1', { seal: true })).toEqual({ kind: 'not_found', sealed: true });
    expect(store.lookup(T, 'k1')).toEqual({ kind: 'not_found', sealed: true });
    expect(store.runIdempotent(req('k1'), charge(100))).toMatchObject({
      kind: 'conflict',
      code: DownstreamErrorCode.KeySealed,
    });
    expect(ledgerRows()).toBe(0);
  });

  it('a lookup with seal on an existing key returns the record and does not seal it', () => {
    store.runIdempotent(req('k1'), charge(100));
    expect(store.lookup(T, 'k1', { seal: true })).toMatchObject({ kind: 'found', record: { status: 'completed' } });
    expect(store.runIdempotent(req('k1'), charge(100)).kind).toBe('replayed');
  });

  it('refuses a fence lower than the highest accepted one and stores a higher one', () => {
    store.runIdempotent(req('k1', HASH_A, 2), charge(100));
    expect(store.begin(req('k1', HASH_A, 1))).toMatchObject({
      kind: 'conflict',
      code: DownstreamErrorCode.StaleFence,
    });
    expect(store.begin(req('k1', HASH_A, 5))).toMatchObject({ kind: 'replayed', record: { fence: 5 } });
    expect(store.begin(req('k1', HASH_A, 4))).toMatchObject({ kind: 'conflict', code: DownstreamErrorCode.StaleFence });
    expect(store.lookup(T, 'k1')).toMatchObject({ kind: 'found', record: { fence: 5 } });
    expect(ledgerRows()).toBe(1);
  });

  it('prunes a record once its retention expired, after which the key is reusable (and counted again)', () => {
    const first = store.runIdempotent(req('k1'), charge(100));
    if (first.kind !== 'completed') throw new Error('expected completed');
    expect(first.record.expiresAt).toBe(new Date(now + 1_000).toISOString());
    now += 999;
    expect(store.lookup(T, 'k1').kind).toBe('found');
    now += 1;
    // The record is pruned, but the effect log still answers a lookup by key: reconciliation cannot be fooled.
    expect(store.lookup(T, 'k1')).toMatchObject({
      kind: 'found',
      record: { status: 'completed', receipt: 'r_1', pruned: true },
    });
    expect(store.lookup(T, 'k1', { seal: true })).toMatchObject({ kind: 'found' });
    expect(store.runIdempotent(req('k1', HASH_B), charge(7)).kind).toBe('completed');
    expect(store.stats('k1')).toMatchObject({ dispatchCount: 2, businessEffectCount: 2 });
  });

  it('counts stats by exact key or by key prefix', () => {
    store.runIdempotent(req('run1/step1'), charge(1));
    store.runIdempotent(req('run1/step2'), charge(2));
    store.runIdempotent(req('run10/step1'), charge(3));
    store.runIdempotent(req('run1/step1'), charge(1));
    expect(store.stats('run1/')).toEqual({ key: 'run1/', prefix: false, dispatchCount: 0, businessEffectCount: 0 });
    expect(store.stats('run1/', true)).toEqual({
      key: 'run1/',
      prefix: true,
      dispatchCount: 3,
      businessEffectCount: 2,
    });
    expect(store.stats('run1', true)).toMatchObject({ dispatchCount: 4, businessEffectCount: 3 });
    expect(store.stats('run1/step1')).toMatchObject({ dispatchCount: 2, businessEffectCount: 1 });
  });

  it('counts every key with an empty prefix', () => {
    store.runIdempotent(req('x1'), charge(1));
    store.runIdempotent(req('y1'), charge(1));
    expect(store.stats('', true)).toEqual({ key: '', prefix: true, dispatchCount: 2, businessEffectCount: 2 });
  });

  it('commits nothing when the in-progress record expired before the second phase', () => {
    const begun = store.begin(req('k1'));
    if (begun.kind !== 'proceed') throw new Error('expected proceed');
    now += 1_000;
    store.prune();
    expect(store.commit(begun.pending, charge(100))).toEqual({ kind: 'lost' });
    expect(ledgerRows()).toBe(0);
    expect(store.stats('k1').businessEffectCount).toBe(0);
  });

  it('treats a LIKE wildcard in a stats prefix literally', () => {
    store.runIdempotent(req('a_b'), charge(1));
    store.runIdempotent(req('axb'), charge(1));
    expect(store.stats('a_', true).businessEffectCount).toBe(1);
  });

  it('a sealed key stays sealed after the retention window: pruning never frees it', () => {
    expect(store.lookup(T, 'k1', { seal: true })).toEqual({ kind: 'not_found', sealed: true });
    now += 10_000; // ten retention windows
    expect(store.prune()).toBe(0);
    expect(store.lookup(T, 'k1')).toEqual({ kind: 'not_found', sealed: true });
    expect(store.runIdempotent(req('k1'), charge(100))).toMatchObject({
      kind: 'conflict',
      code: DownstreamErrorCode.KeySealed,
    });
    expect(ledgerRows()).toBe(0);
  });

  it('a seal written by a business rejection (sealKeys) also survives pruning', () => {
    const sealing: ApplyEffect = () => {
      throw new BusinessRejection('Test.Refused', 'refused', {}, { sealKeys: ['k-forward'] });
    };
    expect(store.runIdempotent(req('k-refund'), sealing).kind).toBe('failed');
    now += 5_000;
    expect(store.lookup(T, 'k-forward')).toEqual({ kind: 'not_found', sealed: true });
  });

  it('a request delayed beyond the retention window is refused as IntentExpired and commits nothing', () => {
    const recordedAt = now;
    expect(store.runIdempotent(req('k1', HASH_A, 0, recordedAt), charge(100)).kind).toBe('completed');
    now += 1_001; // the record is pruned now
    const late = store.runIdempotent(req('k1', HASH_A, 0, recordedAt), charge(100));
    expect(late).toMatchObject({ kind: 'refused', code: DownstreamErrorCode.IntentExpired });
    expect(ledgerRows()).toBe(1);
    // The refused request is counted by code, not logged under the key (refusals never grow the request log).
    expect(store.stats('k1')).toMatchObject({ dispatchCount: 1, businessEffectCount: 1 });
    expect(store.refusals()).toEqual({
      total: 1,
      mutations: 1,
      lookups: 0,
      byCode: { [DownstreamErrorCode.IntentExpired]: 1 },
    });
    // The effect log still answers for the key.
    expect(store.lookup(T, 'k1')).toMatchObject({ kind: 'found', record: { receipt: 'r_1', pruned: true } });
  });

  it('a first request whose intent is older than the retention window is refused before any record exists', () => {
    const recordedAt = now;
    now += 1_001;
    expect(store.runIdempotent(req('k1', HASH_A, 0, recordedAt), charge(100))).toMatchObject({
      kind: 'refused',
      code: DownstreamErrorCode.IntentExpired,
    });
    expect(store.lookup(T, 'k1')).toEqual({ kind: 'not_found', sealed: false });
    expect(ledgerRows()).toBe(0);
  });

  it('an intent exactly at the retention limit is still admitted; an intent time far in the future is refused', () => {
    const recordedAt = now;
    now += 1_000;
    expect(store.runIdempotent(req('k1', HASH_A, 0, recordedAt), charge(1)).kind).toBe('completed');
    expect(store.runIdempotent(req('k2', HASH_A, 0, now + 3_600_000), charge(1))).toMatchObject({
      kind: 'refused',
      code: DownstreamErrorCode.IntentTimeMissing,
    });
    expect(ledgerRows()).toBe(1);
  });
});
