/** The wallet's tools, declared once: used by the workflow (validation, keys, policy) and by activities. */
import { z } from 'zod';
import { defineTool } from '../domain/tool';
import { receiptResult } from './common';
import { formatMoney, Money, PositiveMoney } from '../domain/money';

const AccountId = z.string().regex(/^[a-z0-9_-]{1,64}$/i, 'an account id like acct_1');

export const walletDebit = defineTool({
  name: 'wallet_debit',
  version: 1,
  description:
    'Debit an amount from a customer account in the caller tenant. Charges real money. Proposing the same debit again in this run is the same charge, not a second one; a deliberate second charge of the same amount needs another memo.',
  args: z
    .object({
      account: AccountId,
      amount: PositiveMoney,
      memo: z.string().max(200).optional(),
    })
    .strict(),
  result: receiptResult({
    account: z.string(),
    amount: Money,
    balanceAfter: Money,
  }),
  maxArgumentBytes: 4096,
  maxResultBytes: 16384,
  service: 'wallet',
  route: '/v1/debits',
  effectScope: 'wallet.charge',
  idempotency: 'idempotent_by_key',
  // Two identical debits in one run are one intent; a second, deliberate one carries another memo.
  intentReference: 'memo',
  canonicalize: (args, ctx) => ({
    tenant: ctx.tenant,
    account: args.account,
    amount: { minor: args.amount.minor, currency: args.amount.currency },
    ...(args.memo === undefined ? {} : { memo: args.memo.normalize('NFC').trim() }),
  }),
  authorization: (args, ctx) => ({
    action: 'wallet.debit',
    resource: `${ctx.tenant}/account/${args.account}`,
    resourceTenant: ctx.tenant,
    amountMinor: args.amount.minor,
    currency: args.amount.currency,
  }),
  // Refund by the debit's operation key: computable before the debit is dispatched, so even a debit whose
  // outcome is UNKNOWN is covered (the wallet refuses, with no effect, to refund a debit it never committed).
  compensation: {
    kind: 'compensate',
    tool: 'wallet_refund',
    args: (fwd) => ({ account: fwd.args.account, amount: fwd.args.amount, debitOperationKey: fwd.operationKey }),
  },
  summary: (args) => `wallet_debit ${args.account} ${formatMoney(args.amount)}`,
  promote: (r) => ({ receipt: r.receipt, account: r.account, amount: r.amount, balanceAfter: r.balanceAfter }),
});

export const walletRefund = defineTool({
  name: 'wallet_refund',
  version: 1,
  description: 'Refund (part of) an earlier debit, named by the debit operation key. Used as a compensation.',
  args: z
    .object({
      account: AccountId,
      amount: PositiveMoney,
      debitOperationKey: z.string().regex(/^op_[0-9a-f]{40}$/),
    })
    .strict(),
  result: receiptResult({
    account: z.string(),
    amount: Money,
    balanceAfter: Money,
  }),
  maxArgumentBytes: 4096,
  maxResultBytes: 16384,
  service: 'wallet',
  route: '/v1/refunds',
  effectScope: 'wallet.refund',
  idempotency: 'idempotent_by_key',
  canonicalize: (args, ctx) => ({
    tenant: ctx.tenant,
    account: args.account,
    amount: { minor: args.amount.minor, currency: args.amount.currency },
    debitOperationKey: args.debitOperationKey,
  }),
  authorization: (args, ctx) => ({
    action: 'wallet.refund',
    resource: `${ctx.tenant}/account/${args.account}`,
    resourceTenant: ctx.tenant,
    amountMinor: args.amount.minor,
    currency: args.amount.currency,
  }),
  compensation: { kind: 'none' },
  forwardAbsentReasons: ['Wallet.UnknownDebit'],
  summary: (args) =>
    `wallet_refund ${args.account} ${formatMoney(args.amount)} for ${args.debitOperationKey.slice(0, 14)}`,
  promote: (r) => ({ receipt: r.receipt, account: r.account, amount: r.amount, balanceAfter: r.balanceAfter }),
});

export const walletTools = [walletDebit, walletRefund] as const;
