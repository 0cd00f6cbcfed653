/**
 * `ledgerloop/openai-agents`: the worker side of the OpenAI Agents SDK under Temporal (docs/openai-agents.md). Needs
 * the optional peer dependency `@openai/agents-core`. The workflow side is `ledgerloop/openai-agents/workflow`.
 *
 *   const worker = await Worker.create({
 *     ..., workflowsPath: require.resolve('./workflows'), activities,
 *     plugins: [new OpenAIAgentsPlugin({ modelProvider: new OpenAIProvider({ openAIClient }) })],
 *   });
 */
export {
  OpenAIAgentsPlugin,
  agentsWebpackConfig,
  type AgentsBundleParts,
  type OpenAIAgentsPluginOptions,
} from './plugin';
export {
  AGENTS_MODEL_REFUSED,
  createAgentsModelActivities,
  type AgentsModelActivities,
  type AgentsModelAnswer,
  type AgentsModelCall,
} from '../../activities/agents-model.activities';
