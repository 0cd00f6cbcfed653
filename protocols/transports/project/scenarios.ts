/**
 * The scripted model of the transport protocols' project: one charge, through the HTTP tool or the SDK function;
 * or one note written with the `files` MCP server's `write_file`.
 */
const charge = (tool: string) => (v: Readonly<Record<string, unknown>>) => [
  { proposals: [{ name: tool, arguments: { customer: v['customer'], amount: v['amount'] } }] },
  { final: () => 'charged' },
];

export const scenarios = {
  'charge-http': charge('vendor_charge'),
  'charge-sdk': charge('vendor_charge_sdk'),
  'write-note-mcp': (v: Readonly<Record<string, unknown>>) => [
    { proposals: [{ name: 'files_write_file', arguments: { path: v['path'], content: v['content'] } }] },
    { final: () => 'written' },
  ],
};
