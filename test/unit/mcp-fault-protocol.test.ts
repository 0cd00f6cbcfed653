/**
 * A fault protocol may name an MCP tool (issue #42): the protocol validates against a project whose tools module
 * holds a checked-in MCP tool set, the plan puts the fault at the harness in front of the tool's server (by the
 * tool's name on that server), and every worker of the case gets the harness's rules. A kind the harness cannot
 * inject at the point is refused by name, beside the accepted one.
 */
import { planProtocol } from '../../lab/faults/plan';
import {
  parseProtocol,
  ProtocolFormatError,
  toolTargetsOf,
  BUILTIN_VOCABULARY,
} from '../../lab/faults/protocol-format';
import { mcpServerFaultsOf } from '../../lab/faults/mcp-tool-faults';
import { workflowTools } from '../../protocols/transports/project/workflow-tools';
import type { ToolPoint } from '../../lab/faults/tool-targets';

const vocab = {
  ...BUILTIN_VOCABULARY,
  scenarios: ['write-note-mcp'],
  services: ['vendor-payments'],
  defaultService: 'vendor-payments',
  tools: toolTargetsOf(workflowTools),
};

const protocol = (fault: Record<string, unknown>) => ({
  format: 'ledgerloop.fault-protocol/1',
  seed: 1,
  runDeadlineMs: 60_000,
  cases: [
    {
      name: 'mcp',
      scenario: 'write-note-mcp',
      input: { principal: 'user:alice', tenant: 'acme', path: 'a.txt', content: 'x' },
      faults: [fault],
      expect: [{ metric: 'business_effect_count', op: '==', value: 1 }],
    },
  ],
});

describe('a fault protocol that names an MCP tool', () => {
  it('validates and plans the fault at the harness in front of its server, by its name there', () => {
    const fault = { at: 'downstream.after_commit', do: 'drop_response', tool: 'files_write_file', times: 3 };
    const plan = planProtocol(parseProtocol(protocol(fault), 'p', vocab), vocab);
    const [f] = plan.cases[0]!.faults;
    expect(f).toMatchObject({ via: 'mcp', service: 'files', mcpTool: 'write_file', tool: 'files_write_file' });
    const faults = mcpServerFaultsOf(
      plan.cases[0]!.faults.map((x) => ({ ...x, at: x.at as ToolPoint, tool: x.tool! })),
      (server) => `/cases/1/mcp-${server}`,
    );
    expect(faults).toEqual({
      files: {
        dir: '/cases/1/mcp-files',
        rules: [{ at: 'after_commit', do: 'drop_response', tool: 'write_file', occurrence: 1, times: 3 }],
      },
    });
  });

  it('refuses a kind the harness cannot inject at the point, naming what an MCP tool takes', () => {
    const fault = { at: 'downstream.before_commit', do: 'error_5xx', tool: 'files_write_file' };
    expect(() => parseProtocol(protocol(fault), 'p', vocab)).toThrow(ProtocolFormatError);
    expect(() => parseProtocol(protocol(fault), 'p', vocab)).toThrow(
      /"error_5xx" cannot happen at "downstream.before_commit" on files_write_file \(an MCP tool takes delay, restart_downstream\)/,
    );
  });

  it('a fault on a function tool of the same project plans no harness rule (only MCP tools get one)', () => {
    const fault = { at: 'downstream.after_commit', do: 'drop_response', tool: 'vendor_charge_sdk' };
    const plan = planProtocol(parseProtocol(protocol(fault), 'p', vocab), vocab);
    expect(plan.cases[0]!.faults[0]).toMatchObject({ via: 'worker' });
    const pf = plan.cases[0]!.faults.map((x) => ({ ...x, at: x.at as ToolPoint, tool: x.tool! }));
    expect(mcpServerFaultsOf(pf, (s) => s)).toEqual({});
  });
});
