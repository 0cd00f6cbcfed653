/**
 * The wallet's business data: accounts with integer minor-unit balances, debits and refunds. Every mutation
 * here runs inside the idempotency store's commit transaction and refuses with a typed `BusinessRejection`.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { z } from 'zod';
import { ForwardOperationKey, refuseMissingForward } from '../compensation';
import { BusinessRejection, type AppliedEffect } from '../idempotency-store';

/** Stable reasons of the wallet's 422 rejections. */
export const WalletReason = {
  InsufficientFunds: 'Wallet.InsufficientFunds',
  UnknownAccount: 'Wallet.UnknownAccount',
  CurrencyMismatch: 'Wallet.CurrencyMismatch',
  UnknownDebit: 'Wallet.UnknownDebit',
  DebitAccountMismatch: 'Wallet.DebitAccountMismatch',
  RefundExceedsDebit: 'Wallet.RefundExceedsDebit',
} as const;

const Id = z.string().min(1).max(128);
const Currency = z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as EUR');
const PositiveAmount = z.strictObject({
  minor: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  currency: Currency,
});

/** Body of `POST /v1/debits`. */
export const DebitBody = z.strictObject({
  tenant: Id,
  account: Id,
  amount: PositiveAmount,
  memo: z.string().max(200).optional(),
});
export type DebitBody = z.infer<typeof DebitBody>;

/**
 * Body of `POST /v1/refunds`: names the debit by exactly one of `debitOperationKey` (the forward debit's
 * idempotency key, known before the debit was sent: what a saga compensation uses) or `debitReceipt`.
 */
export const RefundBody = z
  .strictObject({
    tenant: Id,
    account: Id,
    amount: PositiveAmount,
    debitOperationKey: ForwardOperationKey.optional(),
    debitReceipt: Id.optional(),
  })
  .refine((b) => (b.debitOperationKey === undefined) !== (b.debitReceipt === undefined), {
    message: 'name the debit by exactly one of debitOperationKey or debitReceipt',
    path: ['debitOperationKey'],
  });
export type RefundBody = z.infer<typeof RefundBody>;

/** Body of `POST /admin/accounts` (upsert a seeded balance). */
export const SeedAccountBody = z.strictObject({
  tenant: Id,
  account: Id,
  balanceMinor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  currency: Currency,
  /** Free text the account holder controls, echoed in debit results: untrusted content from another user. */
  note: z.string().max(500).optional(),
});
export type SeedAccountBody = z.infer<typeof SeedAccountBody>;

/** An amount of money in integer minor units. */
export interface WalletMoney {
  readonly minor: number;
  readonly currency: string;
}

/** An account's balance as `GET /v1/accounts/:tenant/:account` returns it. */
export interface AccountBalance {
  readonly tenant: string;
  readonly account: string;
  readonly balance: WalletMoney;
}

interface AccountRow {
  readonly balance_minor: number;
  readonly currency: string;
  readonly note: string | null;
}

interface DebitRow {
  readonly receipt: string;
  readonly operation_key: string;
  readonly tenant: string;
  readonly account: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly refunded_minor: number;
}

/** Creates the wallet tables if they do not exist. */
export function migrateWallet(db: Database): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS wallet_accounts (
      tenant        TEXT NOT NULL,
      account       TEXT NOT NULL,
      balance_minor INTEGER NOT NULL CHECK (balance_minor >= 0),
      currency      TEXT NOT NULL,
      note          TEXT,
      PRIMARY KEY (tenant, account)
    );
    CREATE TABLE IF NOT EXISTS wallet_debits (
      receipt        TEXT PRIMARY KEY,
      operation_key  TEXT NOT NULL,
      tenant         TEXT NOT NULL,
      account        TEXT NOT NULL,
      amount_minor   INTEGER NOT NULL CHECK (amount_minor > 0),
      currency       TEXT NOT NULL,
      refunded_minor INTEGER NOT NULL DEFAULT 0 CHECK (refunded_minor <= amount_minor),
      memo           TEXT,
      created_at     INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS wallet_debits_key ON wallet_debits (operation_key);
    CREATE TABLE IF NOT EXISTS wallet_refunds (
      receipt        TEXT PRIMARY KEY,
      operation_key  TEXT NOT NULL,
      debit_receipt  TEXT NOT NULL REFERENCES wallet_debits (receipt),
      amount_minor   INTEGER NOT NULL CHECK (amount_minor > 0),
      created_at     INTEGER NOT NULL
    );
  `);
}

/** Upserts an account with the given balance (admin seeding). */
export function seedAccount(db: Database, seed: SeedAccountBody): AccountBalance {
  db.prepare(
    `INSERT INTO wallet_accounts (tenant, account, balance_minor, currency, note) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (tenant, account) DO UPDATE SET balance_minor = excluded.balance_minor, currency = excluded.currency,
       note = excluded.note`,
  ).run(seed.tenant, seed.account, seed.balanceMinor, seed.currency, seed.note ?? null);
  return { tenant: seed.tenant, account: seed.account, balance: { minor: seed.balanceMinor, currency: seed.currency } };
}

/** The balance of an account, or undefined when it does not exist. */
export function getBalance(db: Database, tenant: string, account: string): AccountBalance | undefined {
  const row = getAccount(db, tenant, account);
  return row === undefined
    ? undefined
    : { tenant, account, balance: { minor: row.balance_minor, currency: row.currency } };
}

/** Debits the account; rejects unknown accounts, currency mismatches and insufficient funds. */
export function applyDebit(db: Database, body: DebitBody, key: string): AppliedEffect {
  const { tenant, account, amount } = body;
  const row = requireAccount(db, tenant, account, amount.currency);
  if (row.balance_minor < amount.minor) {
    throw new BusinessRejection(WalletReason.InsufficientFunds, `balance is lower than ${amount.minor}`, {
      balance: { minor: row.balance_minor, currency: row.currency },
    });
  }
  const balanceAfter = row.balance_minor - amount.minor;
  updateBalance(db, tenant, account, balanceAfter);
  const receipt = `wd_${randomUUID()}`;
  db.prepare(
    `INSERT INTO wallet_debits (receipt, operation_key, tenant, account, amount_minor, currency, memo, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(receipt, key, tenant, account, amount.minor, amount.currency, body.memo ?? null, Date.now());
  const result = {
    receipt,
    tenant,
    account,
    amount,
    balanceAfter: { minor: balanceAfter, currency: row.currency },
    ...(row.note ? { accountNote: row.note } : {}),
  };
  return { receipt, result };
}

/**
 * Credits the account back for an earlier debit, named by its operation key or its receipt; never more than
 * the debit minus its earlier refunds. A debit key the wallet never committed is `Wallet.UnknownDebit` with no
 * effect, and seals that key (see `refuseMissingForward`); a debit key still in progress is a 409, not retained.
 */
export function applyRefund(db: Database, body: RefundBody, key: string): AppliedEffect {
  const { tenant, account, amount } = body;
  const debit = findDebit(db, body);
  const named = debit?.receipt ?? body.debitReceipt ?? body.debitOperationKey ?? '';
  if (debit === undefined && body.debitOperationKey !== undefined) {
    refuseMissingForward(db, tenant, body.debitOperationKey, WalletReason.UnknownDebit, 'debit');
  }
  // Another tenant's debit reads as unknown: a refund never reveals what exists outside its tenant.
  if (debit === undefined || debit.tenant !== tenant) {
    throw new BusinessRejection(WalletReason.UnknownDebit, `no debit ${named}`);
  }
  if (debit.account !== account) {
    throw new BusinessRejection(WalletReason.DebitAccountMismatch, `debit ${named} is not on ${account}`);
  }
  const row = requireAccount(db, tenant, account, amount.currency);
  if (debit.currency !== amount.currency) {
    throw new BusinessRejection(WalletReason.CurrencyMismatch, `debit ${named} is in ${debit.currency}`);
  }
  const refundable = debit.amount_minor - debit.refunded_minor;
  if (amount.minor > refundable) {
    throw new BusinessRejection(WalletReason.RefundExceedsDebit, `only ${refundable} is still refundable`, {
      refundable: { minor: refundable, currency: debit.currency },
    });
  }
  const balanceAfter = row.balance_minor + amount.minor;
  updateBalance(db, tenant, account, balanceAfter);
  db.prepare('UPDATE wallet_debits SET refunded_minor = refunded_minor + ? WHERE receipt = ?').run(
    amount.minor,
    debit.receipt,
  );
  const receipt = `wr_${randomUUID()}`;
  db.prepare(
    'INSERT INTO wallet_refunds (receipt, operation_key, debit_receipt, amount_minor, created_at) VALUES (?, ?, ?, ?, ?)',
  ).run(receipt, key, debit.receipt, amount.minor, Date.now());
  const result = {
    receipt,
    tenant,
    account,
    amount,
    debitReceipt: debit.receipt,
    debitOperationKey: debit.operation_key,
    balanceAfter: { minor: balanceAfter, currency: row.currency },
    refundableAfter: { minor: refundable - amount.minor, currency: debit.currency },
  };
  return { receipt, result };
}

/**
 * The debit a refund names. By key, the latest debit under it: a key reused after its record was pruned may
 * name several debits, and the latest is the one the current intent can mean.
 */
function findDebit(db: Database, body: RefundBody): DebitRow | undefined {
  const columns = 'receipt, operation_key, tenant, account, amount_minor, currency, refunded_minor';
  if (body.debitOperationKey !== undefined) {
    return db
      .prepare(
        `SELECT ${columns} FROM wallet_debits WHERE tenant = ? AND operation_key = ? ORDER BY created_at DESC, rowid DESC`,
      )
      .get(body.tenant, body.debitOperationKey) as DebitRow | undefined;
  }
  return db.prepare(`SELECT ${columns} FROM wallet_debits WHERE receipt = ?`).get(body.debitReceipt) as
    DebitRow | undefined;
}

function getAccount(db: Database, tenant: string, account: string): AccountRow | undefined {
  return db
    .prepare('SELECT balance_minor, currency, note FROM wallet_accounts WHERE tenant = ? AND account = ?')
    .get(tenant, account) as AccountRow | undefined;
}

function requireAccount(db: Database, tenant: string, account: string, currency: string): AccountRow {
  const row = getAccount(db, tenant, account);
  if (row === undefined) throw new BusinessRejection(WalletReason.UnknownAccount, `no account ${tenant}/${account}`);
  if (row.currency !== currency) {
    throw new BusinessRejection(WalletReason.CurrencyMismatch, `account ${account} holds ${row.currency}`);
  }
  return row;
}

function updateBalance(db: Database, tenant: string, account: string, balanceMinor: number): void {
  db.prepare('UPDATE wallet_accounts SET balance_minor = ? WHERE tenant = ? AND account = ?').run(
    balanceMinor,
    tenant,
    account,
  );
}
