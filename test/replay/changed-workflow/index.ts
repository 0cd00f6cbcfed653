/**
 * A deliberately changed agent-run workflow: it starts a timer before anything else. Replaying a recorded
 * history with it must fail with a determinism error, which proves the replay tier can catch a change.
 */
import { sleep } from '@temporalio/workflow';
import { agentRun as recorded } from '../../../workflows/agent-run.workflow';
import type { AgentRunInput, AgentRunResult } from '../../../src/domain/run';

export async function agentRun(input: AgentRunInput): Promise<AgentRunResult> {
  await sleep(1);
  return recorded(input);
}
