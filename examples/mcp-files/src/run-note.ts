/** Starts one governed run that saves a note through the `files` MCP server and waits for its result. */
import type { Client } from '@temporalio/client';
import { readLedger, startAgentRun, type AgentRunResult, type LedgerSnapshot } from 'ledgerloop';
import { TASK_QUEUE } from './project';

export interface NoteRun {
  readonly workflowId: string;
  readonly result: AgentRunResult;
  readonly ledger: LedgerSnapshot;
}

export interface NoteRequest {
  /** An absolute path inside the server's directory. */
  readonly path: string;
  readonly content: string;
}

/**
 * Starts a run for `user:alice` of tenant `acme` that writes `note` and reads it back. `token` mints the start
 * token for the run's workflow id (a development issuer here; your identity provider in production).
 */
export async function runNote(
  client: Client,
  token: (workflowId: string) => Promise<string>,
  note: NoteRequest,
  opts: { readonly taskQueue?: string; readonly workflowId?: string; readonly deadlineMs?: number } = {},
): Promise<NoteRun> {
  const workflowId = opts.workflowId ?? `note-${Date.now()}`;
  const handle = await startAgentRun(client, {
    workflowId,
    taskQueue: opts.taskQueue ?? TASK_QUEUE,
    identityToken: await token(workflowId),
    input: {
      principal: { id: 'user:alice', tenant: 'acme' },
      goal: `Save a note to ${note.path}`,
      strategy: 'check_receipt',
      planner: { kind: 'scripted', scenario: 'save-note', vars: { path: note.path, content: note.content } },
      deadlineAt: new Date(Date.now() + (opts.deadlineMs ?? 60_000)).toISOString(),
    },
  });
  const result = await handle.result();
  return { workflowId, result, ledger: await readLedger(handle) };
}
