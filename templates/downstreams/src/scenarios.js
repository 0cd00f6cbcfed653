// @ts-check
// The scripted model's conversations (the config's `model.scenarios`): what the "model" proposes each turn.
/** @typedef {{ toolName: string, state: string }} Observation */
/** @param {Observation[]} obs */
const report = (obs) => `Done: ${obs.map((o) => `${o.toolName} ${o.state}`).join(', ') || 'nothing'}.`;

exports.scenarios = {
  /** An order in the team's PostgreSQL, then the card charged for it. */
  /** @param {Record<string, unknown>} v */
  checkout: (v) => [
    {
      proposals: [{ name: 'record_order', arguments: { order: v.order, customer: v.customer, amountMinor: v.minor } }],
    },
    {
      proposals: [
        { name: 'charge_card', arguments: { customer: v.customer, amount: { minor: v.minor, currency: 'EUR' } } },
      ],
    },
    { final: report },
  ],
  /** @param {Record<string, unknown>} v */
  'record-order': (v) => [
    {
      proposals: [{ name: 'record_order', arguments: { order: v.order, customer: v.customer, amountMinor: v.minor } }],
    },
    { final: report },
  ],
  /** @param {Record<string, unknown>} v */
  charge: (v) => [
    {
      proposals: [
        { name: 'charge_card', arguments: { customer: v.customer, amount: { minor: v.minor, currency: 'EUR' } } },
      ],
    },
    { final: report },
  ],
  /** A refund of the charge a run made, named by that charge's operation key. */
  /** @param {Record<string, unknown>} v */
  refund: (v) => [
    {
      proposals: [
        {
          name: 'refund_charge',
          arguments: { amount: { minor: v.minor, currency: 'EUR' }, chargeOperationKey: v.chargeOperationKey },
        },
      ],
    },
    { final: report },
  ],
};
