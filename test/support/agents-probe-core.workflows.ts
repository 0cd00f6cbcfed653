/** Probes of `@openai/agents-core` in the sandbox, bundled without the plugin's globals (openai-agents-sandbox.test.ts). */
import { Agent, tool } from '@openai/agents-core';
import { z } from 'zod';

export async function newAgent(): Promise<string> {
  return new Agent({ name: 'probe' }).name;
}

export async function newTool(): Promise<string> {
  return tool({ name: 'probe', description: 'probe', parameters: z.object({}), execute: () => 'ok' }).name;
}
