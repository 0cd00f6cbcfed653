/**
 * The project's worker: the checked-in MCP tool set (bundled into the workflow code), the worker's connection to
 * the `files` server (started here, stopped with the worker), the policy and the model, through `createWorker`.
 */
import { createWorker, scriptedModel, type CreateWorkerOptions, type ModelProvider } from 'ledgerloop/worker';
import { mcpServers, type McpServers, type McpServersOptions, type McpStdioServer } from 'ledgerloop/mcp';
import type { CapabilitySigningKey, IdentityConfig } from 'ledgerloop';
import { filesServer, readPolicy, TASK_QUEUE, TOOLS_MODULE } from './project';
import { filesScenarios } from './scenarios';

export interface FilesWorkerOptions {
  /** The only directory the server may touch. */
  readonly dataDir: string;
  readonly capabilityKey: CapabilitySigningKey;
  readonly issuers: IdentityConfig;
  readonly taskQueue?: string;
  readonly address?: string;
  readonly namespace?: string;
  /** Default: server-filesystem from node_modules on `dataDir` (`filesServer`); tests put a fault in front. */
  readonly server?: McpStdioServer;
  /** The connection's settings (restart backoff, call timeout); default the runtime's. */
  readonly connection?: McpServersOptions;
  /** Default: the scripted model with this project's scenarios. */
  readonly model?: ModelProvider;
  /** Passed through (tests set `maxCachedWorkflows: 0` to replay every task). */
  readonly extra?: Partial<CreateWorkerOptions>;
}

/** Starts the `files` server and a worker that reaches it; `stop()` closes both (the server process exits). */
export async function startFilesWorker(opts: FilesWorkerOptions) {
  const mcp: McpServers = mcpServers({ files: opts.server ?? filesServer(opts.dataDir) }, opts.connection ?? {});
  await mcp.start();
  try {
    const started = await createWorker({
      ...opts.extra,
      tools: TOOLS_MODULE,
      services: {},
      mcp,
      policy: readPolicy(),
      model: opts.model ?? scriptedModel(filesScenarios),
      capabilityKey: opts.capabilityKey,
      identityIssuers: opts.issuers,
      taskQueue: opts.taskQueue ?? TASK_QUEUE,
      ...(opts.address ? { address: opts.address } : {}),
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
    });
    return {
      ...started,
      mcp,
      async stop(): Promise<void> {
        await started.connection.close();
        await mcp.close();
      },
    };
  } catch (err) {
    await mcp.close();
    throw err;
  }
}
