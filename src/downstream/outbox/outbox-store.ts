/**
 * What every outbox store keeps and decides (the team's PostgreSQL: pg-outbox.ts; an SQLite file: sqlite-outbox.ts):
 * one row per tenant and operation key, holding the intent, the highest fence that wrote it and the outcome its relay
 * recorded, and ONE claim rule, `claimDecision`, that each store applies inside its own transaction, so both refuse
 * a stale fence, a key reused with other arguments and a second send of a settled row the same way.
 *
 * A row's status: `pending` (written, nothing sent, or a send proven not to have reached the downstream), `sending`
 * (claimed by a fence, outcome not recorded yet: a worker died mid-send), `unknown` (sent, no answer), `answered`
 * (the downstream's success, replayed to every later attempt), `rejected` (its refusal, likewise). What an attempt
 * after an `unknown` row does is the recovery table's to decide (src/domain/recovery.ts), never a store's.
 */
import type { Json } from '../../domain/canonical';
import { ToolDeclarationError } from '../../domain/tool-check';

/** The default table name. */
export const OUTBOX_TABLE = 'ledgerloop_outbox';

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** How a column is typed in each dialect: text, a small count, or a 64-bit number (fences, epoch milliseconds). */
type ColumnType = 'text' | 'count' | 'big';

/** The table's columns, in order: the one list each store's DDL is written from and its `verify` requires. */
const COLUMNS: readonly { readonly name: string; readonly type: ColumnType; readonly rest?: string }[] = [
  { name: 'tenant', type: 'text', rest: 'NOT NULL' },
  { name: 'operation_key', type: 'text', rest: 'NOT NULL' },
  { name: 'tool', type: 'text', rest: 'NOT NULL' },
  { name: 'arguments_hash', type: 'text', rest: 'NOT NULL' },
  { name: 'body_json', type: 'text', rest: 'NOT NULL' },
  { name: 'intent_at', type: 'text', rest: 'NOT NULL' },
  { name: 'fence', type: 'big', rest: 'NOT NULL' },
  {
    name: 'status',
    type: 'text',
    rest: "NOT NULL CHECK (status IN ('pending', 'sending', 'unknown', 'answered', 'rejected'))",
  },
  { name: 'sends', type: 'count', rest: 'NOT NULL DEFAULT 0' },
  { name: 'outcome_json', type: 'text' },
  { name: 'receipt', type: 'text' },
  { name: 'created_at', type: 'big', rest: 'NOT NULL' },
  { name: 'first_sent_at', type: 'big' },
  { name: 'last_sent_at', type: 'big' },
];

/** The columns a store's `verify` requires (each store's DDL writes them). */
export const REQUIRED_COLUMNS: readonly string[] = COLUMNS.map((c) => c.name);

const TYPES: Readonly<Record<'postgres' | 'sqlite', Readonly<Record<ColumnType, string>>>> = {
  postgres: { text: 'TEXT', count: 'INTEGER', big: 'BIGINT' },
  sqlite: { text: 'TEXT', count: 'INTEGER', big: 'INTEGER' },
};

/** The table's DDL in `dialect` (SQLite's as a STRICT table), for `table` once checked as a plain identifier. */
export function outboxTableDdl(dialect: 'postgres' | 'sqlite', table: string): string {
  const columns = COLUMNS.map(
    (c) => `  ${c.name.padEnd(14)} ${TYPES[dialect][c.type]}${c.rest === undefined ? '' : ` ${c.rest}`}`,
  );
  return `CREATE TABLE IF NOT EXISTS ${checkedTable(table)} (
${columns.join(',\n')},
  PRIMARY KEY (tenant, operation_key)
)${dialect === 'sqlite' ? ' STRICT' : ''}`;
}

export type OutboxStatus = 'pending' | 'sending' | 'unknown' | 'answered' | 'rejected';

/** The statuses that hold the downstream's answer: never sent again, replayed. */
export const SETTLED: readonly OutboxStatus[] = ['answered', 'rejected'];

/** The intent an attempt writes. */
export interface OutboxIntent {
  readonly tenant: string;
  readonly key: string;
  readonly tool: string;
  readonly argumentsHash: string;
  readonly body: Json;
  readonly intentAt: string;
  /** The attempt's fence: lower than the row's highest is refused, inside the claiming transaction. */
  readonly fence: number;
}

/** One row as the relay and the lookup read it. */
export interface OutboxRow extends OutboxIntent {
  /** The highest fence that wrote or claimed the row. */
  readonly fence: number;
  readonly status: OutboxStatus;
  /** Sends the relay began (a crash after one leaves it counted, its outcome unrecorded). */
  readonly sends: number;
  /** The recorded outcome: the downstream's answer (`answered`, `rejected`), or the reason it is unknown. */
  readonly outcome: unknown;
  readonly receipt: string | null;
}

/** What a claim found. Only `claimed` may send. */
export type ClaimResult =
  | { readonly kind: 'claimed'; readonly row: OutboxRow }
  /** A newer fence wrote the row: this attempt sends nothing. */
  | { readonly kind: 'stale'; readonly rowFence: number }
  /** The key was written for another tool or other arguments: nothing is sent. */
  | { readonly kind: 'mismatch' }
  /** The row already holds the downstream's answer: replayed, nothing is sent. */
  | { readonly kind: 'settled'; readonly row: OutboxRow };

/** An outcome to record on a row. `answered` and `rejected` are the downstream's; the others say nothing came. */
export interface OutboxRecord {
  readonly status: Exclude<OutboxStatus, 'sending'>;
  readonly outcome: unknown;
  readonly receipt?: string;
}

/** An outbox table: the transport (outbox-transport.ts) and the relay (relay.ts) use only this. */
export interface OutboxStore {
  readonly table: string;
  /** Refuses (`ToolDeclarationError`) unless the table exists with every required column: run before polling. */
  verify(): Promise<void>;
  /** Writes the intent (or finds its row) and applies `claimDecision` to it, in ONE transaction that locks it. */
  claim(intent: OutboxIntent): Promise<ClaimResult>;
  /**
   * Records what a send by `fence` brought. The downstream's answer (`answered`, `rejected`) is recorded whoever
   * sent it, unless the row already holds one; anything else only while `fence` still holds the row.
   */
  record(tenant: string, key: string, fence: number, r: OutboxRecord): Promise<void>;
  /** The row of `tenant` under `key`, or undefined (no intent was ever written, so nothing was ever sent). */
  read(tenant: string, key: string): Promise<OutboxRow | undefined>;
}

/**
 * The one claim rule, on the row as locked inside the claiming transaction: a key written for another tool or
 * other arguments is `mismatch`; a lower fence than the row's is `stale`; a row holding the downstream's answer is
 * `settled` (its fence raised to a newer attempt's, `raise`); anything else is claimed for this fence.
 */
export function claimDecision(
  row: OutboxRow,
  intent: OutboxIntent,
):
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'stale' }
  | { readonly kind: 'settled'; readonly raise: boolean }
  | { readonly kind: 'claim' } {
  if (row.argumentsHash !== intent.argumentsHash || row.tool !== intent.tool) return { kind: 'mismatch' };
  if (intent.fence < row.fence) return { kind: 'stale' };
  if (SETTLED.includes(row.status)) return { kind: 'settled', raise: intent.fence > row.fence };
  return { kind: 'claim' };
}

/** `table` if it is a plain identifier (it is written into SQL), else a `ToolDeclarationError`. */
export function checkedTable(table: string): string {
  if (!IDENTIFIER.test(table))
    throw new ToolDeclarationError([
      `outbox: the table name ${JSON.stringify(table.slice(0, 80))} is not a plain identifier`,
    ]);
  return table;
}

/** Refuses (`ToolDeclarationError`) a table that does not exist (no columns found) or lacks a required column. */
export function checkColumns(table: string, found: ReadonlySet<string>, create: string): void {
  if (found.size === 0)
    throw new ToolDeclarationError([`outbox: the table ${table} does not exist (create it with ${create})`]);
  const missing = REQUIRED_COLUMNS.filter((c) => !found.has(c));
  if (missing.length > 0)
    throw new ToolDeclarationError([`outbox: the table ${table} lacks the columns ${missing.join(', ')}`]);
}

/** A row as both stores hold it in SQL (the fence already a number). */
export interface RawOutboxRow {
  tenant: string;
  operation_key: string;
  tool: string;
  arguments_hash: string;
  body_json: string;
  intent_at: string;
  fence: number;
  status: OutboxStatus;
  sends: number;
  outcome_json: string | null;
  receipt: string | null;
}

/** A stored row as the outbox reads it. */
export function toRow(r: RawOutboxRow): OutboxRow {
  return {
    tenant: r.tenant,
    key: r.operation_key,
    tool: r.tool,
    argumentsHash: r.arguments_hash,
    body: JSON.parse(r.body_json) as Json,
    intentAt: r.intent_at,
    fence: r.fence,
    status: r.status,
    sends: r.sends,
    outcome: r.outcome_json === null ? null : (JSON.parse(r.outcome_json) as unknown),
    receipt: r.receipt,
  };
}
