/**
 * The OpenAI Agents spike as a Temporal plugin, beside the team's other plugins on its own `Worker.create`:
 * - the model activity (`invokeAgentsModel`), answered by the worker's `ModelProvider`;
 * - two changes to the workflow bundle, without which `@openai/agents-core` cannot run in the sandbox:
 *   1. the sandbox globals (workflows/sandbox-globals.ts) are the bundle's first entry, before any module;
 *   2. dynamic `import()`s are bundled eagerly. `agents-core/dist/sandbox/memory/generation.mjs` does
 *      `await import("../agent.mjs")`, so webpack splits a second chunk and adds its chunk loader; evaluating that
 *      bundle in the workflow's V8 context throws `Automatic publicPath is not supported in this browser` at the
 *      first workflow activation, and the worker stops with it.
 * Built on the SDK's `SimplePlugin`, as `AiSdkPlugin` is.
 */
import type { ModelProvider } from '@openai/agents-core';
import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions } from '@temporalio/worker';
import { createAgentsModelActivities } from './model-activities';

type Configuration = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

const SANDBOX_GLOBALS = require.resolve('./workflows/sandbox-globals');

/** The bundle changes above, on a webpack configuration (exported for the tests that show each one is needed). */
export function agentsWebpackConfig(
  config: Configuration,
  parts = { globals: true, eagerImports: true },
): Configuration {
  const entry = Array.isArray(config.entry) ? config.entry : config.entry !== undefined ? [config.entry as string] : [];
  const javascript = {
    ...config.module?.parser?.javascript,
    ...(parts.eagerImports ? { dynamicImportMode: 'eager' as const } : {}),
  };
  return {
    ...config,
    entry: parts.globals ? [SANDBOX_GLOBALS, ...entry] : entry,
    module: { ...config.module, parser: { ...config.module?.parser, javascript } },
  };
}

export interface AgentsSpikePluginOptions {
  /** The real model behind the activity: `new OpenAIProvider(...)` from `@openai/agents-openai`, or a script. */
  readonly modelProvider: ModelProvider;
}

export class AgentsSpikePlugin extends SimplePlugin {
  constructor(options: AgentsSpikePluginOptions) {
    super({ name: 'ledgerloop-openai-agents-spike', activities: createAgentsModelActivities(options.modelProvider) });
  }

  override configureBundler(options: BundleOptions): BundleOptions {
    const base = super.configureBundler(options);
    const theirs = base.webpackConfigHook;
    return { ...base, webpackConfigHook: (config) => agentsWebpackConfig(theirs ? theirs(config) : config) };
  }
}
