/**
 * The worker's transports: each tool's declaration resolved to the transport that reaches its downstream, and
 * the check that refuses the worker's start when a tool cannot be served (`ToolDeclarationError`): a declaration
 * the recovery table cannot follow, a function tool without its implementation (or a lookup it declares), an
 * implementation of no function tool, a secret named but missing, an HTTP API without a base URL, an MCP tool
 * whose server the worker is not given, an outbox over a tool the worker does not serve or one that takes a fence.
 */
import { declarationProblems, ToolDeclarationError } from '../domain/tool-check';
import type { AnyTool } from '../domain/tool';
import { DepthGuardedTransport } from './depth-guard';
import { secretsOf, transportOf } from '../domain/transport';
import type { Downstream } from './client';
import { ContractTransport } from './contract-transport';
import type { ToolImplementation } from './function-tool';
import { FunctionTransport } from './function-transport';
import { HttpApiTransport } from './http-transport';
import { OutboxTransport } from './outbox/outbox-transport';
import type { OutboxStore } from './outbox/outbox-store';
import { readSecrets, type SecretSource } from './secrets';
import type { Transport } from './transport';

export { ToolDeclarationError };

/** The fenced local outbox (src/downstream/outbox) and the tools whose sends go through it. */
export interface OutboxWiring {
  /**
   * The outbox table: in the team's PostgreSQL (`new PgOutbox({ pool })`) or an SQLite file (`new SqliteOutbox({
   * file })`); the worker verifies it at start.
   */
  readonly outbox: OutboxStore;
  /** Names of tools on a downstream that takes no fence (`http` or `function`): each send is claimed in the outbox. */
  readonly tools: readonly string[];
}

/** What the worker's MCP servers give the wiring (src/downstream/mcp/servers.ts). */
export interface McpWiring {
  /** Every reason an MCP tool cannot be served: a server the worker is not configured for, a lookup not declared. */
  problems(tools: readonly AnyTool[]): string[];
  /** The transport of an MCP tool, or undefined when its server is not configured. */
  transportFor(tool: AnyTool): Transport | undefined;
}

export interface TransportWiring {
  /** The client of each service on Ledgerloop's HTTP contract, by service name. */
  readonly services: Readonly<Record<string, Downstream>>;
  /** Base URL per service name: an HTTP API's comes from here. */
  readonly baseUrls?: Readonly<Record<string, string>>;
  /** The function tools' implementations (`implementTool`). */
  readonly functions?: readonly ToolImplementation[];
  /** Where secrets are read from; default the worker's environment. */
  readonly secrets?: SecretSource;
  /** Per-request timeout of HTTP API calls. */
  readonly httpTimeoutMs?: number;
  /**
   * The worker's MCP servers (`mcpServers` of the `ledgerloop/mcp` entry): the transport of each MCP tool. Given
   * as an object, so a worker without MCP tools never loads the MCP SDK (an optional peer dependency).
   */
  readonly mcp?: McpWiring;
  /** Tools whose sends go through the fenced local outbox. Default none. */
  readonly outbox?: OutboxWiring;
  /** Decorates every transport (the fault lab's crash points do); it must keep the interface's promises. */
  readonly wrap?: (tool: AnyTool, transport: Transport) => Transport;
}

/** Every reason the worker cannot serve `tools` with `wiring` (empty: it can). */
export function wiringProblems(tools: readonly AnyTool[], wiring: TransportWiring): string[] {
  const problems = tools.flatMap(declarationProblems);
  const impls = new Map<string, ToolImplementation>();
  for (const impl of wiring.functions ?? []) {
    if (impls.has(impl.tool)) problems.push(`${impl.tool}: two implementations are given`);
    impls.set(impl.tool, impl);
  }
  const source = wiring.secrets ?? process.env;
  for (const tool of tools) {
    const t = transportOf(tool);
    const missing = readSecrets(secretsOf(tool), source).missing;
    if (missing.length > 0) problems.push(`${tool.name}: the secret ${missing.join(', ')} is named but missing`);
    if (t.kind === 'function') {
      const impl = impls.get(tool.name);
      if (impl === undefined) problems.push(`${tool.name}: a function tool whose implementation the worker lacks`);
      else if (t.promises?.lookup !== undefined && impl.lookup === undefined)
        problems.push(`${tool.name}: declares a lookup, but its implementation has none`);
    }
    if (t.kind === 'http' && !wiring.baseUrls?.[tool.service])
      problems.push(`${tool.name}: an HTTP API whose base URL (services.${tool.service}) the worker lacks`);
  }
  const mcpTools = tools.filter((t) => transportOf(t).kind === 'mcp');
  if (mcpTools.length > 0) {
    if (wiring.mcp === undefined)
      problems.push(...mcpTools.map((t) => `${t.name}: an MCP tool, but the worker is given no MCP servers`));
    else problems.push(...wiring.mcp.problems(mcpTools));
  }
  problems.push(...outboxProblems(tools, wiring.outbox));
  const functionTools = new Set(tools.filter((t) => transportOf(t).kind === 'function').map((t) => t.name));
  for (const name of impls.keys())
    if (!functionTools.has(name)) problems.push(`${name}: an implementation of no function tool`);
  return problems;
}

/** Every reason the outbox wiring cannot serve its tools: no outbox, a tool not served, a tool that takes a fence. */
function outboxProblems(tools: readonly AnyTool[], wiring: OutboxWiring | undefined): string[] {
  if (wiring === undefined) return [];
  const problems: string[] = [];
  if (wiring.outbox === undefined || wiring.outbox === null)
    problems.push('outbox: tools are named, but no outbox is given');
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (const name of wiring.tools ?? []) {
    const tool = byName.get(name);
    const kind = tool === undefined ? undefined : transportOf(tool).kind;
    if (kind === undefined) problems.push(`outbox: ${name} is not a tool this worker serves`);
    else if (kind !== 'http' && kind !== 'function')
      problems.push(`outbox: ${name} is on the ${kind} transport; the outbox serves http and function tools only`);
  }
  return problems;
}

/** Throws `ToolDeclarationError` naming every problem, before the worker connects. */
export function checkWiring(tools: readonly AnyTool[], wiring: TransportWiring): void {
  const problems = wiringProblems(tools, wiring);
  if (problems.length > 0) throw new ToolDeclarationError(problems);
}

/** Each tool's transport, built on first use and kept for the life of the worker, behind the depth guard. */
export class Transports {
  private readonly built = new Map<string, Transport>();
  private readonly impls: ReadonlyMap<string, ToolImplementation>;

  constructor(private readonly wiring: TransportWiring) {
    this.impls = new Map((wiring.functions ?? []).map((i) => [i.tool, i]));
  }

  /** The transport of `tool`, or undefined when the worker has nothing to reach it with. */
  for(tool: AnyTool): Transport | undefined {
    const known = this.built.get(tool.name);
    if (known !== undefined) return known;
    const reached = this.make(tool);
    if (reached === undefined) return undefined;
    const outbox = this.wiring.outbox;
    const made = outbox?.tools.includes(tool.name) ? new OutboxTransport(outbox.outbox, reached) : reached;
    // The depth guard outermost: no transport, and no decoration of one, hands on an answer nested too deep.
    const transport = new DepthGuardedTransport(this.wiring.wrap ? this.wiring.wrap(tool, made) : made);
    this.built.set(tool.name, transport);
    return transport;
  }

  private make(tool: AnyTool): Transport | undefined {
    const t = transportOf(tool);
    const secrets = readSecrets(secretsOf(tool), this.wiring.secrets ?? process.env).values;
    switch (t.kind) {
      case 'ledgerloop': {
        const client = this.wiring.services[tool.service];
        return client === undefined ? undefined : new ContractTransport(tool.service, client, t.route);
      }
      case 'function': {
        const impl = this.impls.get(tool.name);
        return impl === undefined ? undefined : new FunctionTransport(impl, t.promises ?? {}, secrets);
      }
      case 'http': {
        const baseUrl = this.wiring.baseUrls?.[tool.service];
        if (baseUrl === undefined) return undefined;
        return new HttpApiTransport(t, {
          baseUrl,
          secrets,
          ...(this.wiring.httpTimeoutMs ? { timeoutMs: this.wiring.httpTimeoutMs } : {}),
        });
      }
      case 'mcp':
        return this.wiring.mcp?.transportFor(tool);
    }
  }
}
