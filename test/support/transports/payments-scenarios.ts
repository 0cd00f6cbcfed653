/** The scripted model of the transport tests' project: one charge, or one refund of a charge named by its key. */
export const scenarios = {
  charge: (v: Readonly<Record<string, unknown>>) => [
    { proposals: [{ name: 'payments_charge', arguments: { customer: v.customer, amount: v.amount } }] },
    { final: () => 'charged' },
  ],
  refund: (v: Readonly<Record<string, unknown>>) => [
    {
      proposals: [
        { name: 'payments_refund', arguments: { amount: v.amount, chargeOperationKey: v.chargeOperationKey } },
      ],
    },
    { final: () => 'refunded' },
  ],
};
