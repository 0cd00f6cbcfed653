/**
 * A fault that names a `tool` is injected where that tool's transport can be reached, so one protocol format
 * (tool + point + kind) serves every transport:
 *
 * | transport                | `downstream.before_commit`, `downstream.after_commit` are injected by            |
 * |--------------------------|------------------------------------------------------------------------------------|
 * | Ledgerloop contract      | the service itself (`POST /admin/faults`), on the tool's service and route          |
 * | function                 | the first worker, around the team's function (lab/faults/transport-faults.ts)       |
 * | third-party HTTP API     | a loopback proxy the runner puts in front of the API (host/testing/http-fault-proxy.ts) |
 * | MCP server (stdio)       | the harness in front of the server each worker spawns (lab/faults/mcp-stdio-fault.ts) |
 *
 * `restart_downstream` is the runner's act on the tool's service process, except on an MCP tool: there the harness
 * kills the server the worker started, and the worker restarts it.
 */
import type { AnyTool } from '../../src/domain/tool';
import { transportOf } from '../../src/domain/transport';
import type { FaultKind } from './catalog';
import { MCP_TOOL_KINDS } from './mcp-tool-faults';
import type { ProxyFault } from '../../host/testing/http-fault-proxy';
import type { TransportFault } from './transport-faults';

/** Where a tool's faults are injected. */
export type ToolTarget =
  | { readonly via: 'service'; readonly service: string; readonly path: string }
  | { readonly via: 'worker'; readonly service: string }
  /** `path` is the API's route when it has no `{field}` template (else the proxy matches the method alone). */
  | { readonly via: 'proxy'; readonly service: string; readonly method: string; readonly path?: string }
  /** `service` is the MCP server's name in the project, `mcpTool` the tool's name on that server. */
  | { readonly via: 'mcp'; readonly service: string; readonly mcpTool: string };

/** The points a `tool` may be named at. */
export const TOOL_POINTS = ['downstream.before_commit', 'downstream.after_commit'] as const;
export type ToolPoint = (typeof TOOL_POINTS)[number];

/** The kinds each injection site takes at each point (a service takes the catalog's own). */
const SITE_KINDS: Readonly<Record<'worker' | 'proxy' | 'mcp', Readonly<Record<ToolPoint, readonly FaultKind[]>>>> = {
  worker: {
    'downstream.before_commit': ['kill', 'delay', 'error_5xx', 'restart_downstream'],
    'downstream.after_commit': ['kill', 'delay', 'drop_response', 'restart_downstream'],
  },
  proxy: {
    'downstream.before_commit': ['delay', 'drop_response', 'error_5xx', 'restart_downstream'],
    'downstream.after_commit': ['kill', 'delay', 'drop_response', 'restart_downstream'],
  },
  mcp: MCP_TOOL_KINDS,
};

/** The kinds a tool's fault may take at `at`, or undefined when the site takes the catalog's. */
export function toolKinds(target: ToolTarget, at: ToolPoint): readonly FaultKind[] | undefined {
  return target.via === 'service' ? undefined : SITE_KINDS[target.via][at];
}

/** Where `tool`'s faults go, by its transport. */
export function toolTarget(tool: AnyTool): ToolTarget {
  const t = transportOf(tool);
  if (t.kind === 'ledgerloop') return { via: 'service', service: tool.service, path: t.route };
  if (t.kind === 'function') return { via: 'worker', service: tool.service };
  if (t.kind === 'http')
    return { via: 'proxy', service: tool.service, method: t.method, ...(t.path.includes('{') ? {} : { path: t.path }) };
  return { via: 'mcp', service: tool.service, mcpTool: t.tool };
}

/** What a planned tool fault needs to be turned into a site's own rule. */
export interface ToolFaultPlan {
  readonly at: ToolPoint;
  readonly do: FaultKind;
  readonly tool: string;
  readonly occurrence: number;
  readonly times: number;
  readonly ms: number;
}

/** The first worker's transport fault for a function tool's planned fault. */
export function workerFaultOf(f: ToolFaultPlan): TransportFault {
  const before = f.at === 'downstream.before_commit';
  const kind = f.do === 'error_5xx' ? 'error' : (f.do as TransportFault['do']);
  return {
    at: before ? 'before_send' : 'after_commit',
    do: kind,
    tool: f.tool,
    occurrence: f.occurrence,
    times: f.times,
    ...(kind === 'delay' ? { ms: f.ms } : {}),
  };
}

/**
 * The proxy's rule for an HTTP tool's planned fault. `kill` holds the API's answer for `ms` (the runner kills the
 * worker waiting on it, lab/faults/drivers.ts), as a service does for its own `kill`.
 */
export function proxyFaultOf(f: ToolFaultPlan, method: string, path: string | undefined): ProxyFault {
  const kind = f.do === 'kill' ? 'delay' : (f.do as ProxyFault['do']);
  return {
    at: f.at === 'downstream.before_commit' ? 'before_forward' : 'after_response',
    do: kind,
    method,
    ...(path !== undefined ? { path } : {}),
    occurrence: f.occurrence,
    times: f.times,
    ...(kind === 'delay' ? { ms: f.ms } : {}),
  };
}
