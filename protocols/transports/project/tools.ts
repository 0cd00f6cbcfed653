/**
 * The tools of the transport protocols' project (protocols/transports): one charge at the vendor payments server
 * (services/vendor-payments, Stripe's idempotency semantics, its own process and SQLite storage) on two transports
 * that speak none of Ledgerloop's contract:
 * - `vendor_charge`: the HTTP API, declared (the `payments_charge` declaration of the transport tests);
 * - `vendor_charge_sdk`: a function tool that charges through the API's SDK-shaped client (./functions.ts).
 * Both name the service `vendor-payments`, the process the fault runner starts for each case.
 */
import { paymentsCharge } from '../../../test/support/transports/tools';
import type { AnyTool } from '../../../src/domain/tool';

const DAY_MS = 86_400_000;

export const vendorCharge: AnyTool = {
  ...paymentsCharge,
  name: 'vendor_charge',
  service: 'vendor-payments',
  compensation: { kind: 'none' },
};

export const vendorChargeSdk: AnyTool = {
  ...paymentsCharge,
  name: 'vendor_charge_sdk',
  description: 'Charge a customer through the payment provider SDK.',
  service: 'vendor-payments',
  // The SDK sends the operation key as its Idempotency-Key (kept 24 h) and finds a charge by its metadata.
  transport: {
    kind: 'function',
    secrets: ['PAYMENTS_API_KEY'],
    promises: { keyRetentionMs: DAY_MS, lookup: 'by_metadata', maxInFlightMs: 30_000 },
  },
  compensation: { kind: 'none' },
};

export const vendorTools = [vendorCharge, vendorChargeSdk];
