/**
 * A worker for a project: what its config adds to the options a worker process reads from its environment (the
 * environment itself comes from `applyProjectEnvironment`): the project's tools module (bundled into the workflow
 * code in place of the built-in tools), its models (the scripted model with the project's scenarios), and an
 * inline policy document.
 */
import type { Scenario } from '../../src/planner/scripted-model';
import { scriptedModel } from '../../src/planner/scripted-model';
import type { ModelProvider } from '../../src/planner/model';
import { StaticPolicyStore } from '../../src/stores/policy-store';
import type { LedgerloopWorkerOptions } from '../worker/worker';
import type { ToolImplementation } from '../../src/downstream/function-tool';
import { loadUserModule, ProjectConfigError, type ProjectConfig } from './config';
import { projectOutbox } from './outbox';
import { loadProjectMcp, type McpServerWrap } from './mcp-servers';

/** The scenarios module's `scenarios` export (or its default export): scenario name to `Scenario` function. */
export async function loadScenarios(config: ProjectConfig, file: string): Promise<Readonly<Record<string, Scenario>>> {
  const fail = (message: string): never => {
    throw new ProjectConfigError(config.file, [{ field: 'model.scenarios', message }]);
  };
  let mod: Record<string, unknown>;
  try {
    mod = await loadUserModule(file);
  } catch (err) {
    return fail(`cannot load ${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  const fromDefault = mod['default'] as Record<string, unknown> | undefined;
  const scenarios = mod['scenarios'] ?? fromDefault?.['scenarios'] ?? fromDefault;
  if (typeof scenarios !== 'object' || scenarios === null || Array.isArray(scenarios))
    return fail(`${file} must export scenarios: an object of scenario name to function (vars) => turns`);
  const entries = Object.entries(scenarios as Record<string, unknown>);
  if (entries.length === 0) return fail(`${file} exports no scenario`);
  const notFunctions = entries.filter(([, s]) => typeof s !== 'function').map(([name]) => name);
  if (notFunctions.length > 0) return fail(`${file}: scenarios ${notFunctions.join(', ')} are not functions`);
  return scenarios as Readonly<Record<string, Scenario>>;
}

/** The functions module's `functions` export (or its default export): implementations from `implementTool`. */
export async function loadFunctions(config: ProjectConfig, file: string): Promise<ToolImplementation[]> {
  const fail = (message: string): never => {
    throw new ProjectConfigError(config.file, [{ field: 'functions', message }]);
  };
  let mod: Record<string, unknown>;
  try {
    mod = await loadUserModule(file);
  } catch (err) {
    return fail(`cannot load ${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  const fromDefault = mod['default'] as Record<string, unknown> | unknown[] | undefined;
  const list = mod['functions'] ?? (Array.isArray(fromDefault) ? fromDefault : fromDefault?.['functions']);
  if (!Array.isArray(list)) return fail(`${file} must export functions: a list of implementTool(...)`);
  const bad = list.findIndex(
    (f) =>
      typeof f !== 'object' ||
      f === null ||
      typeof (f as ToolImplementation).tool !== 'string' ||
      typeof (f as ToolImplementation).execute !== 'function',
  );
  if (bad >= 0) return fail(`${file}: functions[${bad}] is not an implementTool(...) implementation`);
  return list as ToolImplementation[];
}

/** The scenario names of the project's scripted model, or undefined when it has none. */
export async function projectScenarioNames(config: ProjectConfig): Promise<string[] | undefined> {
  const scripted = config.models.find((m) => m.kind === 'scripted');
  if (scripted?.kind !== 'scripted') return undefined;
  return Object.keys(await loadScenarios(config, scripted.scenarios));
}

/** What an entry outside the runtime changes in a project's worker (the fault lab: its MCP harness). */
export interface ProjectWorkerHooks {
  /** Applied to each of the config's MCP servers before the worker starts it. Default: each as configured. */
  readonly wrapMcpServer?: McpServerWrap;
}

/**
 * The worker options `config` adds: its tools module, its scripted model (an OpenAI-compatible model comes from
 * the environment the config set), its policy when the config holds the document itself and no
 * LEDGERLOOP_POLICY_FILE overrides it, its outbox (its database URL from `env`), and its MCP servers (started
 * here: the caller closes `mcp`).
 */
export async function projectWorkerOptions(
  config: ProjectConfig,
  env: NodeJS.ProcessEnv = process.env,
  hooks: ProjectWorkerHooks = {},
): Promise<Partial<LedgerloopWorkerOptions> & { readonly mcp?: { close(): Promise<void> } }> {
  const models: ModelProvider[] = [];
  for (const m of config.models) {
    if (m.kind === 'scripted') models.push(scriptedModel(await loadScenarios(config, m.scenarios)));
  }
  const inlinePolicy =
    config.policy !== undefined && 'document' in config.policy && !env['LEDGERLOOP_POLICY_FILE']
      ? config.policy.document
      : undefined;
  const outbox = projectOutbox(config, env);
  const mcp = config.mcp === undefined ? undefined : await loadProjectMcp(config, config.mcp, hooks.wrapMcpServer);
  await mcp?.start();
  return {
    tools: config.tools,
    ...(mcp !== undefined ? { mcp } : {}),
    ...(config.functions !== undefined ? { functions: await loadFunctions(config, config.functions) } : {}),
    models,
    ...(inlinePolicy ? { policies: new StaticPolicyStore(inlinePolicy) } : {}),
    ...(outbox !== undefined ? { outbox } : {}),
  };
}
