/**
 * The functions module of the transport tests' project (`functions` in its ledgerloop.config): the refund as a team
 * writes a function tool over its provider's SDK, and the ledger and mail tools over in-memory fakes.
 *
 * The pattern: hand the SDK the operation key as its idempotency key and the attempt's signal; throw
 * `NothingSentError` only for an error the SDK raised before anything was executed (the API's validation refusals
 * save nothing); let every other error through, so the call stays UNKNOWN and is looked up.
 */
import { found, implementTool, notFound, NothingSentError } from '../../../src/downstream/function-tool';
import { FakeLedgerApi, FakeMailApi } from './fake-apis';
import { ledgerAndMailFunctions } from './functions';
import { PaymentsClient, PaymentsError } from './payments-sdk';
import { paymentsRefund } from './tools';

const payments = (apiKey: string) =>
  new PaymentsClient(apiKey, { baseUrl: process.env['PAYMENTS_BASE_URL'] ?? '', maxNetworkRetries: 0 });

const byKey = (field: string, key: string) => `metadata["${field}"]:"${key}"`;

export const refund = implementTool(paymentsRefund, {
  async execute(args, ctx) {
    const client = payments(ctx.secrets['PAYMENTS_API_KEY'] ?? '');
    const charge = (
      await client.charges.search(
        { query: byKey('ledgerloop_key', `ll_${args.chargeOperationKey}`) },
        { signal: ctx.signal },
      )
    ).data[0];
    if (charge === undefined) throw new NothingSentError('Payments.ChargeNotFound', 'no charge under that key (yet)');
    try {
      return await client.refunds.create(
        { charge: charge.id, amount: args.amount.minor, metadata: { ledgerloop_key: ctx.operationKey } },
        { idempotencyKey: `ll_${ctx.operationKey}`, signal: ctx.signal },
      );
    } catch (err) {
      // The API's refusals before executing (validation, a missing charge) save nothing and did nothing.
      if (err instanceof PaymentsError && err.type === 'invalid_request_error')
        throw new NothingSentError(
          `Payments.${err.code === 'amount_too_large' ? 'AmountTooLarge' : 'Refused'}`,
          err.message,
        );
      throw err;
    }
  },
  async lookup(key, ctx) {
    const client = payments(ctx.secrets['PAYMENTS_API_KEY'] ?? '');
    const refunds = await client.refunds.search({ query: byKey('ledgerloop_key', key) }, { signal: ctx.signal });
    return refunds.data[0] ? found(refunds.data[0]) : notFound();
  },
});

export const functions = [
  refund,
  ...ledgerAndMailFunctions(new FakeLedgerApi(process.env['LEDGER_API_KEY'] ?? ''), new FakeMailApi()),
];
