/**
 * The model conversation, kept BY REFERENCE outside workflow history. The workflow sends the planner only the
 * latest turn's observations; the planner rebuilds the full Chat Completions transcript from this store, keyed
 * by (runId, turn).
 *
 * Writes are idempotent: an activity retry rewrites its own row instead of adding one, and a row is only ever
 * replaced by a later scheduling or a later attempt of the same activity, never by a slower, older attempt.
 *
 * The SQLite implementation is per machine. Workers on several machines need a shared implementation of
 * `TranscriptStore` (a database every worker reaches); otherwise a turn planned on another machine fails with
 * `Planner.TranscriptMissing`.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { dataDir } from '../package-paths';

/** The default transcript file: `<repo>/.data/transcripts.db`. */
export const DEFAULT_TRANSCRIPT_DB = path.join(dataDir(), 'transcripts.db');

/** One tool call exactly as the model produced it (raw argument text included). */
export interface TranscriptToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** The assistant message of one turn. */
export interface AssistantTurn {
  readonly content: string | null;
  readonly toolCalls: readonly TranscriptToolCall[];
}

/** Which activity execution wrote a row: a newer scheduling, or a later attempt of the same one, wins. */
export interface WriteStamp {
  readonly scheduledMs: number;
  readonly attempt: number;
}

/** A tool result as sent back to the model: the observation as JSON data, keyed by provider call id. */
export interface StoredToolResult {
  readonly providerCallId: string;
  readonly content: string;
}

/** One earlier turn: what the model said and the results recorded for its calls. */
export interface TranscriptTurn {
  readonly turn: number;
  readonly assistant: AssistantTurn;
  /** Tool result content by provider call id. */
  readonly toolResults: ReadonlyMap<string, string>;
}

/** Storage for model transcripts. Implementations must be safe under concurrent workers. */
export interface TranscriptStore {
  /** Record the assistant message of `turn`; ignored when a newer stamp already wrote the turn. */
  saveAssistantTurn(runId: string, turn: number, message: AssistantTurn, stamp: WriteStamp): Promise<void>;
  /** Record tool results of `turn` (idempotent by provider call id). */
  saveToolResults(runId: string, turn: number, results: readonly StoredToolResult[]): Promise<void>;
  /** Every recorded turn of the run below `beforeTurn`, ascending. */
  loadTurns(runId: string, beforeTurn: number): Promise<TranscriptTurn[]>;
  close(): Promise<void>;
}

interface AssistantRow {
  turn: number;
  message: string;
}

interface ResultRow {
  turn: number;
  provider_call_id: string;
  content: string;
}

/** SQLite (better-sqlite3, WAL) transcript store: one file shared by the worker processes of one machine. */
export class SqliteTranscriptStore implements TranscriptStore {
  private readonly db: Database.Database;

  constructor(readonly file: string = DEFAULT_TRANSCRIPT_DB) {
    if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS transcript_turns (
        run_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        scheduled_ms INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        message TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        PRIMARY KEY (run_id, turn)
      );
      CREATE TABLE IF NOT EXISTS transcript_tool_results (
        run_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        provider_call_id TEXT NOT NULL,
        content TEXT NOT NULL,
        PRIMARY KEY (run_id, turn, provider_call_id)
      );
    `);
  }

  async saveAssistantTurn(runId: string, turn: number, message: AssistantTurn, stamp: WriteStamp): Promise<void> {
    const write = this.db.transaction(() => {
      const changed = this.db
        .prepare(
          `INSERT INTO transcript_turns (run_id, turn, scheduled_ms, attempt, message, recorded_at)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (run_id, turn) DO UPDATE SET
             scheduled_ms = excluded.scheduled_ms, attempt = excluded.attempt,
             message = excluded.message, recorded_at = excluded.recorded_at
           WHERE (excluded.scheduled_ms, excluded.attempt) >= (transcript_turns.scheduled_ms, transcript_turns.attempt)`,
        )
        .run(runId, turn, stamp.scheduledMs, stamp.attempt, JSON.stringify(message), new Date().toISOString()).changes;
      // A replaced turn (a workflow reset re-planned it) invalidates results recorded for the old calls.
      if (changed > 0)
        this.db.prepare('DELETE FROM transcript_tool_results WHERE run_id = ? AND turn = ?').run(runId, turn);
    });
    write.immediate();
  }

  async saveToolResults(runId: string, turn: number, results: readonly StoredToolResult[]): Promise<void> {
    const insert = this.db.prepare(
      `INSERT INTO transcript_tool_results (run_id, turn, provider_call_id, content) VALUES (?, ?, ?, ?)
       ON CONFLICT (run_id, turn, provider_call_id) DO UPDATE SET content = excluded.content`,
    );
    const write = this.db.transaction(() => {
      for (const r of results) insert.run(runId, turn, r.providerCallId, r.content);
    });
    write.immediate();
  }

  async loadTurns(runId: string, beforeTurn: number): Promise<TranscriptTurn[]> {
    const turns = this.db
      .prepare('SELECT turn, message FROM transcript_turns WHERE run_id = ? AND turn < ? ORDER BY turn')
      .all(runId, beforeTurn) as AssistantRow[];
    const results = this.db
      .prepare('SELECT turn, provider_call_id, content FROM transcript_tool_results WHERE run_id = ? AND turn < ?')
      .all(runId, beforeTurn) as ResultRow[];
    return turns.map((row) => ({
      turn: row.turn,
      assistant: JSON.parse(row.message) as AssistantTurn,
      toolResults: new Map(results.filter((r) => r.turn === row.turn).map((r) => [r.provider_call_id, r.content])),
    }));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
