/**
 * The function tool of the transport protocols' project: a charge through the vendor's SDK-shaped client, the
 * operation key as its idempotency key, found again by the metadata the charge carries. Its base URL is the vendor
 * the fault runner started for the case (the worker's `LEDGERLOOP_SERVICES`); its API key a worker secret.
 */
import { found, implementTool, notFound, NothingSentError } from '../../../src/downstream/function-tool';
import { PaymentsClient, PaymentsError } from '../../../test/support/transports/payments-sdk';
import { vendorChargeSdk } from './tools';

function client(apiKey: string): PaymentsClient {
  const services = JSON.parse(process.env['LEDGERLOOP_SERVICES'] ?? '{}') as Record<string, string>;
  return new PaymentsClient(apiKey, { baseUrl: services['vendor-payments'] ?? '', maxNetworkRetries: 0 });
}

const byKey = (key: string) => `metadata["ledgerloop_key"]:"ll_${key}"`;

export const chargeSdk = implementTool(vendorChargeSdk, {
  async execute(args: { customer: string; amount: { minor: number; currency: string } }, ctx) {
    const payments = client(ctx.secrets['PAYMENTS_API_KEY'] ?? '');
    try {
      return await payments.charges.create(
        {
          customer: args.customer,
          amount: args.amount.minor,
          currency: args.amount.currency.toLowerCase(),
          metadata: { ledgerloop_key: `ll_${ctx.operationKey}` },
        },
        { idempotencyKey: `ll_${ctx.operationKey}`, signal: ctx.signal },
      );
    } catch (err) {
      // The API's validation refusals save nothing and did nothing; every other error may have charged.
      if (err instanceof PaymentsError && err.type === 'invalid_request_error')
        throw new NothingSentError('Payments.Refused', err.message);
      throw err;
    }
  },
  async lookup(key, ctx) {
    const payments = client(ctx.secrets['PAYMENTS_API_KEY'] ?? '');
    const charges = await payments.charges.search({ query: byKey(key) }, { signal: ctx.signal });
    return charges.data[0] ? found(charges.data[0]) : notFound();
  },
});

export const functions = [chargeSdk];
