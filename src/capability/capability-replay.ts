/**
 * Used capability ids (`jti`): a capability is accepted once. Signers mint a fresh token for every attempt (a
 * Temporal retry, a relay's next poll), so a second request carrying the same token is a replay, refused even
 * when it is signed by a trusted key and names the same call. An id is kept until its token has expired (plus the
 * clock skew), after which the expiry check refuses the token anyway.
 */
import type { Database } from 'better-sqlite3';

export interface JtiRegistry {
  /** Records `jti` as used until `untilMs`; false when it was already used (a replay). */
  consume(jti: string, untilMs: number, nowMs: number): boolean;
}

/** Bound on ids kept in memory; a full registry refuses new tokens (fail closed) until old ones expire. */
const MEMORY_LIMIT = 200_000;

/** In-process record: enough for one verifying process whose tokens live a minute. */
export class MemoryJtiRegistry implements JtiRegistry {
  private readonly used = new Map<string, number>();

  consume(jti: string, untilMs: number, nowMs: number): boolean {
    const seen = this.used.get(jti);
    if (seen !== undefined && seen > nowMs) return false;
    if (this.used.size >= MEMORY_LIMIT) {
      for (const [id, until] of this.used) if (until <= nowMs) this.used.delete(id);
      if (this.used.size >= MEMORY_LIMIT) return false;
    }
    this.used.set(jti, untilMs);
    return true;
  }

  get size(): number {
    return this.used.size;
  }
}

/**
 * Record kept in the service's own SQLite database: a restarted service (or another process on the same file)
 * still refuses a token used before the restart.
 */
export class SqliteJtiRegistry implements JtiRegistry {
  private readonly insert;
  private readonly prune;
  private consumed = 0;

  constructor(db: Database) {
    db.exec('CREATE TABLE IF NOT EXISTS capability_jti (jti TEXT PRIMARY KEY, until_ms INTEGER NOT NULL)');
    this.insert = db.prepare(
      'INSERT INTO capability_jti (jti, until_ms) VALUES (?, ?) ON CONFLICT(jti) DO UPDATE SET until_ms = excluded.until_ms WHERE capability_jti.until_ms <= ?',
    );
    this.prune = db.prepare('DELETE FROM capability_jti WHERE until_ms <= ?');
  }

  consume(jti: string, untilMs: number, nowMs: number): boolean {
    if (++this.consumed % 1_000 === 0) this.prune.run(nowMs);
    return this.insert.run(jti, untilMs, nowMs).changes === 1;
  }
}
