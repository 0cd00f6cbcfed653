// @ts-check
// The function tools' implementations (the config's `functions`), loaded by the worker only: they do I/O.
//
// The pattern: hand the SDK the operation key as its idempotency key and the attempt's signal; throw
// `NothingSentError` only for what proves nothing was executed (here: the provider's validation refusals, which
// save nothing); let every other error through, so the call is UNKNOWN and Ledgerloop looks it up.
const { found, implementTool, notFound, NothingSentError } = require('ledgerloop/worker');
const { PaymentsClient, PaymentsError } = require('./payments-client');
const { KEY_FIELD, refundCharge } = require('./payments.tools');

/**
 * The provider's base URL: the worker's services map first (`ledgerloop faults` points it at the provider it
 * started for the case), else `PAYMENTS_URL`.
 */
function paymentsUrl() {
  const services = JSON.parse(process.env.LEDGERLOOP_SERVICES || '{}');
  return services['vendor-payments'] || process.env.PAYMENTS_URL || 'http://127.0.0.1:4400';
}

/** @param {Record<string, string>} secrets */
const client = (secrets) =>
  new PaymentsClient(secrets['PAYMENTS_API_KEY'] ?? '', { baseUrl: paymentsUrl(), maxNetworkRetries: 0 });

/** @param {string} value */
const byKey = (value) => ({ query: `metadata["${KEY_FIELD}"]:"${value}"` });

exports.functions = [
  implementTool(refundCharge, {
    async execute(args, ctx) {
      const payments = client(ctx.secrets);
      // The charge this refunds, found by the key charge_card sent it under (`ll_` + its operation key).
      const { data } = await payments.charges.search(byKey(`ll_${args.chargeOperationKey}`), { signal: ctx.signal });
      if (data[0] === undefined) throw new NothingSentError('Payments.ChargeNotFound', 'no charge under that key');
      try {
        return await payments.refunds.create(
          { charge: data[0].id, amount: args.amount.minor, metadata: { [KEY_FIELD]: ctx.operationKey } },
          { idempotencyKey: `ll_${ctx.operationKey}`, signal: ctx.signal },
        );
      } catch (err) {
        if (err instanceof PaymentsError && err.type === 'invalid_request_error')
          throw new NothingSentError('Payments.Refused', `${err.code}: ${err.message}`);
        throw err;
      }
    },
    async lookup(key, ctx) {
      const { data } = await client(ctx.secrets).refunds.search(byKey(key), { signal: ctx.signal });
      return data[0] ? found(data[0]) : notFound();
    },
  }),
];
