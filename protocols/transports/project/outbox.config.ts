/**
 * The transport protocols' project with the fenced local outbox in front of the vendor's HTTP API
 * (protocols/transports/outbox.json): every send of `vendor_charge` is first claimed under the attempt's fence in
 * the outbox table of a PostgreSQL whose URL the workers read from LEDGERLOOP_OUTBOX_URL. Run it under
 * scripts/with-outbox-postgres.ts, which starts that PostgreSQL and sets the variable:
 *
 *   node -r tsx/cjs scripts/with-outbox-postgres.ts LEDGERLOOP_OUTBOX_URL -- \
 *     npx ledgerloop faults --config protocols/transports/project/outbox.config.ts protocols/transports/outbox.json
 */
import base from './ledgerloop.config';

export default {
  ...base,
  outbox: { tools: ['vendor_charge'], urlEnv: 'LEDGERLOOP_OUTBOX_URL' },
};
