/**
 * The store-level guarantees that make compensation by forward key safe: a refusal "nothing to compensate"
 * seals the forward key in the same transaction, an in-progress forward is a non-retained 409, and an
 * in-progress record left by a dead process is released at the next start.
 */
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { refuseMissingForward } from '../../services/compensation';
import { HttpError } from '../../services/http-kit';
import { BusinessRejection, IdempotencyStore, type ApplyEffect } from '../../services/idempotency-store';

const HASH = 'a'.repeat(64);
const T = 'acme';
const req = (key: string, scope: string) => ({
  tenant: T,
  key,
  argumentsHash: HASH,
  fence: 0,
  scope,
  intentAtMs: Date.now(),
});
const effect: ApplyEffect = () => ({ receipt: 'r1', result: { ok: true } });

describe('compensation by forward key in the idempotency store', () => {
  let db: Database;
  let store: IdempotencyStore;
  beforeEach(() => {
    db = new BetterSqlite3(':memory:');
    store = new IdempotencyStore({ db });
  });
  afterEach(() => db.close());

  const compensate =
    (forwardKey: string): ApplyEffect =>
    (d) =>
      refuseMissingForward(d, T, forwardKey, 'Test.UnknownForward', 'forward effect');

  it('a compensation for a forward key with no record is retained as failed and seals the forward key', () => {
    const out = store.runIdempotent(req('comp-1', 'test.undo'), compensate('fwd-1'));
    expect(out).toMatchObject({
      kind: 'failed',
      record: { error: { reason: 'Test.UnknownForward', forwardOperationKey: 'fwd-1', forwardStatus: 'none' } },
    });
    expect(store.lookup(T, 'fwd-1')).toEqual({ kind: 'not_found', sealed: true });
    expect(store.begin(req('fwd-1', 'test.do'))).toMatchObject({
      kind: 'conflict',
      code: DownstreamErrorCode.KeySealed,
    });
  });

  it('sealing never overwrites a forward record that exists', () => {
    store.runIdempotent(req('fwd-2', 'test.do'), () => {
      throw new BusinessRejection('Test.No', 'no');
    });
    const out = store.runIdempotent(req('comp-2', 'test.undo'), compensate('fwd-2'));
    expect(out).toMatchObject({ kind: 'failed', record: { error: { forwardStatus: 'failed' } } });
    expect(store.lookup(T, 'fwd-2')).toMatchObject({ kind: 'found', record: { status: 'failed' } });
  });

  it('a compensation while its forward key is in progress throws a 409 and retains nothing', () => {
    const forward = store.begin(req('fwd-3', 'test.do'));
    if (forward.kind !== 'proceed') throw new Error('expected proceed');
    const comp = store.begin(req('comp-3', 'test.undo'));
    if (comp.kind !== 'proceed') throw new Error('expected proceed');
    let thrown: unknown;
    try {
      store.commit(comp.pending, compensate('fwd-3'));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    expect(thrown).toMatchObject({ status: 409, code: DownstreamErrorCode.InProgress });
    expect(store.lookup(T, 'comp-3')).toEqual({ kind: 'not_found', sealed: false });
    expect(store.commit(forward.pending, effect).kind).toBe('completed');
  });

  it('recoverOrphans releases in-progress records (no effect exists under them) and keeps settled ones', () => {
    const orphan = store.begin(req('orphan', 'test.do'));
    expect(orphan.kind).toBe('proceed');
    store.runIdempotent(req('done', 'test.do'), effect);
    expect(store.recoverOrphans()).toBe(1);
    expect(store.lookup(T, 'orphan')).toEqual({ kind: 'not_found', sealed: false });
    expect(store.lookup(T, 'done')).toMatchObject({ kind: 'found', record: { status: 'completed' } });
    expect(store.runIdempotent(req('orphan', 'test.do'), effect).kind).toBe('completed');
    expect(store.stats('orphan')).toEqual({ key: 'orphan', prefix: false, dispatchCount: 2, businessEffectCount: 1 });
  });
});
