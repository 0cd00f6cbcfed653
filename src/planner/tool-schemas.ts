/**
 * OpenAI Chat Completions `tools` derived from the tool declarations: the zod `args` schema the workflow
 * validates with is the one source of truth for the JSON Schema the model sees. Nothing here is hand-written
 * per tool, so the model's view and the workflow's check cannot drift apart.
 */
import { z } from 'zod';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { AnyTool } from '../domain/tool';
import { builtinTools, type ToolRegistry } from '../tools/registry';

/** A JSON Schema object as the Chat Completions API takes it for `function.parameters`. */
export type JsonSchemaObject = Record<string, unknown>;

/**
 * The JSON Schema (draft 7) of one tool's arguments, from its zod schema, describing the input the model must
 * produce. Throws when the schema has parts JSON Schema cannot express (transforms, dates, ...) or when its
 * root is not an object, as function parameters must be.
 */
export function argumentsJsonSchema(tool: AnyTool): JsonSchemaObject {
  const schema = z.toJSONSchema(tool.args, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'throw',
  }) as JsonSchemaObject;
  const { $schema: _dialect, ...parameters } = schema;
  if (parameters.type !== 'object') {
    throw new Error(`tool ${tool.name}: arguments must be a JSON object schema, got type ${String(parameters.type)}`);
  }
  return parameters;
}

/** One Chat Completions function tool: the declaration's name, description and argument schema. */
export function functionTool(tool: AnyTool): ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: argumentsJsonSchema(tool) },
  };
}

/** Every tool of a registry as Chat Completions `tools`, in the registry's stable name order. */
export function chatCompletionTools(registry: ToolRegistry = builtinTools): ChatCompletionFunctionTool[] {
  return registry.names().map((name) => {
    const tool = registry.get(name);
    if (tool === undefined) throw new Error(`tool ${name} vanished from its registry`);
    return functionTool(tool);
  });
}
