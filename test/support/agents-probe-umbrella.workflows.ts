/** The `@openai/agents` umbrella imported by workflow code (openai-agents-sandbox.test.ts): its import fails. */
import { Agent } from '@openai/agents';

export async function umbrellaAgent(): Promise<string> {
  return new Agent({ name: 'probe' }).name;
}
