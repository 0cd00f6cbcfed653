/**
 * The transcript store every worker of a deployment shares: PostgreSQL (`pg`), chosen with
 * `LEDGERLOOP_TRANSCRIPT_URL=postgres://user:password@host:port/database`. The same rules as the SQLite store:
 * one row per (run, turn), replaced only by a later scheduling or a later attempt of the same activity, and a
 * replaced turn drops the tool results recorded for its old calls. The tables are migration 1 of component
 * `transcripts`, applied on first use (src/stores/postgres.ts).
 */
import { parsePostgresUrl, PostgresDatabase } from './postgres';
import type { AssistantTurn, StoredToolResult, TranscriptStore, TranscriptTurn, WriteStamp } from './transcript-store';

/** The environment variable naming the shared store. */
export const TRANSCRIPT_URL_ENV = 'LEDGERLOOP_TRANSCRIPT_URL';

export class TranscriptStoreConfigError extends Error {
  override readonly name = 'TranscriptStoreConfigError';
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS transcript_turns (
    run_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    scheduled_ms BIGINT NOT NULL,
    attempt INTEGER NOT NULL,
    message TEXT NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, turn)
  );
  CREATE TABLE IF NOT EXISTS transcript_tool_results (
    run_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    provider_call_id TEXT NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (run_id, turn, provider_call_id)
  );
`;

/** Parses the URL and refuses anything but postgres(ql)://; the message never repeats the password. */
export function parseTranscriptUrl(url: string): string {
  return parsePostgresUrl(url, TRANSCRIPT_URL_ENV, (m) => new TranscriptStoreConfigError(m));
}

export class PostgresTranscriptStore implements TranscriptStore {
  private readonly db: PostgresDatabase;

  constructor(url: string, opts: { readonly max?: number } = {}) {
    this.db = new PostgresDatabase({
      url,
      setting: TRANSCRIPT_URL_ENV,
      urlError: (m) => new TranscriptStoreConfigError(m),
      component: 'transcripts',
      migrations: [{ version: 1, sql: SCHEMA }],
      ...(opts.max === undefined ? {} : { max: opts.max }),
    });
  }

  async saveAssistantTurn(runId: string, turn: number, message: AssistantTurn, stamp: WriteStamp): Promise<void> {
    await this.db.transaction(async (c) => {
      const res = await c.query(
        `INSERT INTO transcript_turns (run_id, turn, scheduled_ms, attempt, message) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (run_id, turn) DO UPDATE SET
           scheduled_ms = excluded.scheduled_ms, attempt = excluded.attempt, message = excluded.message, recorded_at = now()
         WHERE (excluded.scheduled_ms, excluded.attempt) >= (transcript_turns.scheduled_ms, transcript_turns.attempt)`,
        [runId, turn, stamp.scheduledMs, stamp.attempt, JSON.stringify(message)],
      );
      // A replaced turn (a workflow reset re-planned it) invalidates results recorded for the old calls.
      if ((res.rowCount ?? 0) > 0)
        await c.query('DELETE FROM transcript_tool_results WHERE run_id = $1 AND turn = $2', [runId, turn]);
    });
  }

  async saveToolResults(runId: string, turn: number, results: readonly StoredToolResult[]): Promise<void> {
    if (results.length === 0) return;
    await this.db.transaction(async (c) => {
      for (const r of results) {
        await c.query(
          `INSERT INTO transcript_tool_results (run_id, turn, provider_call_id, content) VALUES ($1, $2, $3, $4)
           ON CONFLICT (run_id, turn, provider_call_id) DO UPDATE SET content = excluded.content`,
          [runId, turn, r.providerCallId, r.content],
        );
      }
    });
  }

  async loadTurns(runId: string, beforeTurn: number): Promise<TranscriptTurn[]> {
    const turns = await this.db.query<{ turn: number; message: string }>(
      'SELECT turn, message FROM transcript_turns WHERE run_id = $1 AND turn < $2 ORDER BY turn',
      [runId, beforeTurn],
    );
    const results = await this.db.query<{ turn: number; provider_call_id: string; content: string }>(
      'SELECT turn, provider_call_id, content FROM transcript_tool_results WHERE run_id = $1 AND turn < $2',
      [runId, beforeTurn],
    );
    return turns.rows.map((row) => ({
      turn: row.turn,
      assistant: JSON.parse(row.message) as AssistantTurn,
      toolResults: new Map(results.rows.filter((r) => r.turn === row.turn).map((r) => [r.provider_call_id, r.content])),
    }));
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
