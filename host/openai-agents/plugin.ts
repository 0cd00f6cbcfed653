/**
 * `OpenAIAgentsPlugin`: the worker side of the OpenAI Agents SDK under Temporal, beside the team's other plugins on
 * its own `Worker.create` (docs/openai-agents.md):
 * - the model activity (`invokeAgentsModel`), answered by the worker's `ModelProvider`;
 * - three changes to the workflow bundle, without which `@openai/agents-core` cannot run in the sandbox:
 *   1. the sandbox globals (workflows/openai-agents/sandbox-globals.ts) are the bundle's first entry, before any
 *      module;
 *   2. dynamic `import()`s are bundled eagerly. `agents-core/dist/sandbox/memory/generation.mjs` does
 *      `await import("../agent.mjs")`, so webpack splits a second chunk and adds its chunk loader; evaluating that
 *      bundle in the workflow's V8 context throws `Automatic publicPath is not supported in this browser` at the
 *      first workflow activation, and the worker stops with it;
 *   3. `ledgerloop/openai-agents/workflow` resolves to this package's own file (in a clone too, where the entry's
 *      target under dist/ is not built).
 * Built on the SDK's `SimplePlugin`, as `AiSdkPlugin` is.
 */
import type { ModelProvider } from '@openai/agents-core';
import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions } from '@temporalio/worker';
import { createAgentsModelActivities } from '../../activities/agents-model.activities';
import { packageModule } from '../../src/package-paths';

type Configuration = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

const SANDBOX_GLOBALS = packageModule('workflows', 'openai-agents', 'sandbox-globals');
const WORKFLOW_ENTRY = packageModule('workflows', 'openai-agents', 'index');

/** Which of the bundle changes to make: all by default (the tests turn one off to show it is needed). */
export interface AgentsBundleParts {
  readonly globals: boolean;
  readonly eagerImports: boolean;
}

/** The bundle changes above, on a webpack configuration. */
export function agentsWebpackConfig(
  config: Configuration,
  parts: AgentsBundleParts = { globals: true, eagerImports: true },
): Configuration {
  const entry = Array.isArray(config.entry) ? config.entry : config.entry !== undefined ? [config.entry as string] : [];
  const javascript = {
    ...config.module?.parser?.javascript,
    ...(parts.eagerImports ? { dynamicImportMode: 'eager' as const } : {}),
  };
  const alias = config.resolve?.alias && !Array.isArray(config.resolve.alias) ? config.resolve.alias : {};
  return {
    ...config,
    entry: parts.globals ? [SANDBOX_GLOBALS, ...entry] : entry,
    module: { ...config.module, parser: { ...config.module?.parser, javascript } },
    resolve: { ...config.resolve, alias: { ...alias, 'ledgerloop/openai-agents/workflow$': WORKFLOW_ENTRY } },
  };
}

export interface OpenAIAgentsPluginOptions {
  /**
   * The real model behind the activity: `new OpenAIProvider({ openAIClient: new OpenAI({ maxRetries: 0 }) })` from
   * `@openai/agents-openai`, or a scripted `ModelProvider` in tests. Required: there is no default model.
   */
  readonly modelProvider: ModelProvider;
}

export class OpenAIAgentsPlugin extends SimplePlugin {
  constructor(options: OpenAIAgentsPluginOptions) {
    super({ name: 'ledgerloop-openai-agents', activities: createAgentsModelActivities(options.modelProvider) });
  }

  override configureBundler(options: BundleOptions): BundleOptions {
    const base = super.configureBundler(options);
    const theirs = base.webpackConfigHook;
    return { ...base, webpackConfigHook: (config) => agentsWebpackConfig(theirs ? theirs(config) : config) };
  }
}
