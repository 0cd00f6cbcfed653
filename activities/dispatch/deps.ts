/**
 * What the dispatch activity's steps share: the worker's tools, their transports and the signer, resolved once per
 * worker from `DispatchDeps`.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { Failure } from '../../src/domain/failures';
import type { AnyTool } from '../../src/domain/tool';
import type { Downstream } from '../../src/downstream/client';
import type { ToolImplementation } from '../../src/downstream/function-tool';
import type { SecretSource } from '../../src/downstream/secrets';
import type { Transport } from '../../src/downstream/transport';
import { Transports, type McpWiring, type OutboxWiring } from '../../src/downstream/transports';
import { builtinTools, type ToolRegistry } from '../../src/tools/registry';
import { resolveAuthorizeDeps, type AuthorizeDeps } from '../authorize.activities';

export interface DispatchDeps {
  /** One client per service on Ledgerloop's HTTP contract (`wallet`, ...): a `DownstreamClient`, or a wrapper. */
  readonly services: Readonly<Record<string, Downstream>>;
  readonly workerIdentity: string;
  /**
   * The current policy and the capability signing key (default: the built-in policy, no key); used here to sign
   * decisions the workflow made from a held policy.
   */
  readonly authorize?: Partial<AuthorizeDeps>;
  /** The tool declarations (the workflow bundle's); default the built-in tools. */
  readonly tools?: ToolRegistry;
  /** Base URL per service name, for tools on an HTTP API. */
  readonly baseUrls?: Readonly<Record<string, string>>;
  /** The function tools' implementations (`implementTool`). */
  readonly functions?: readonly ToolImplementation[];
  /** Where function tools' and HTTP APIs' secrets come from; default the worker's environment. */
  readonly secrets?: SecretSource;
  /** Decorates each tool's transport (the fault lab's crash points); it must keep the interface's promises. */
  readonly wrapTransport?: (tool: AnyTool, transport: Transport) => Transport;
  /** Per-request timeout of HTTP API calls. */
  readonly httpTimeoutMs?: number;
  /** The worker's MCP servers (`mcpServers` of `ledgerloop/mcp`), for MCP tools; default none. */
  readonly mcp?: McpWiring;
  /** Tools whose sends go through the fenced local outbox; default none. */
  readonly outbox?: OutboxWiring;
}

/** The steps' dependencies, resolved once per worker. */
export interface DispatchContextDeps {
  readonly signer: AuthorizeDeps;
  readonly tools: ToolRegistry;
  readonly transports: Transports;
  readonly workerIdentity: string;
}

export function resolveDispatchDeps(deps: DispatchDeps): DispatchContextDeps {
  return {
    signer: resolveAuthorizeDeps(deps.tools ? { ...deps.authorize, tools: deps.tools } : deps.authorize),
    tools: deps.tools ?? builtinTools,
    workerIdentity: deps.workerIdentity,
    transports: new Transports({
      services: deps.services,
      ...(deps.baseUrls ? { baseUrls: deps.baseUrls } : {}),
      ...(deps.functions ? { functions: deps.functions } : {}),
      ...(deps.secrets ? { secrets: deps.secrets } : {}),
      ...(deps.wrapTransport ? { wrap: deps.wrapTransport } : {}),
      ...(deps.httpTimeoutMs ? { httpTimeoutMs: deps.httpTimeoutMs } : {}),
      ...(deps.mcp ? { mcp: deps.mcp } : {}),
      ...(deps.outbox ? { outbox: deps.outbox } : {}),
    }),
  };
}

/** The tool's transport, or a typed failure (nothing was sent): no client, implementation or base URL for it. */
export function transportOrFail(deps: DispatchContextDeps, tool: AnyTool, service: string): Transport {
  const transport = deps.transports.for(tool);
  if (transport === undefined)
    throw ApplicationFailure.nonRetryable(`no downstream configured for ${service}`, 'Config.MissingService');
  return transport;
}

/** The declaration of `toolName`, or the signer's refusal (nothing sent): a worker never guesses a tool. */
export function toolOrFail(deps: DispatchContextDeps, toolName: string): AnyTool {
  const tool = deps.tools.get(toolName);
  if (tool === undefined)
    throw ApplicationFailure.nonRetryable(
      `the signer refused: no tool ${toolName.slice(0, 100)} is declared; nothing sent`,
      Failure.CapabilityClaimsMismatch,
    );
  return tool;
}
