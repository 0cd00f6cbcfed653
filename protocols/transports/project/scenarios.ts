/** The scripted model of the transport protocols' project: one charge, through the HTTP tool or the SDK function. */
const charge = (tool: string) => (v: Readonly<Record<string, unknown>>) => [
  { proposals: [{ name: tool, arguments: { customer: v['customer'], amount: v['amount'] } }] },
  { final: () => 'charged' },
];

export const scenarios = {
  'charge-http': charge('vendor_charge'),
  'charge-sdk': charge('vendor_charge_sdk'),
};
