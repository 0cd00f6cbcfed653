/**
 * "The next release" for the rolling-upgrade demonstration: the agent-run workflow with a change that breaks the
 * replay of every history the current one recorded (it starts with a timer). A run that had moved onto it mid-way
 * would fail with a determinism error; a pinned run never does.
 */
import { sleep } from '@temporalio/workflow';
import type { AgentRunInput, AgentRunResult } from '../../src/domain/run';
import { agentRun as current } from '../../workflows/agent-run.workflow';

export { ledgerQuery, resolveCallUpdate } from '../../workflows/definitions';

export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  await sleep(1);
  return current(input);
}
