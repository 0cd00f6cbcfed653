/**
 * Replay a run's history against the workflow code a worker with `tools` runs: the determinism check for a change
 * to the workflow or to a user's tool declarations (a declaration that canonicalizes, keys or authorizes another
 * way commands another way). `ledgerloop replay` does the same for the built-in tools.
 */
import type { DataConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { checkHistoryTools } from '../client/history-tools';
import { builtinTools } from '../../src/tools/registry';
import { bundlerOptionsFor, WORKFLOWS_PATH } from './bundle';
import { loadToolsModule } from './tools-module';

export interface ReplayOptions {
  /** The id the run had: its logical call ids and operation keys derive from it. */
  readonly workflowId: string;
  /** The user's tools module the run's worker had (absolute path); default the built-in tools. */
  readonly tools?: string;
  /** The payload codecs the run was recorded with, if any. */
  readonly dataConverter?: DataConverter;
}

/**
 * Resolves when the history replays; throws `ReplayToolsMissingError` (naming them) when the history used tools
 * `tools` lacks, and the SDK's `DeterminismViolationError` when the code commands otherwise.
 */
export async function replayHistory(history: temporal.api.history.v1.IHistory, opts: ReplayOptions): Promise<void> {
  const names = opts.tools === undefined ? builtinTools.names() : loadToolsModule(opts.tools).names();
  await checkHistoryTools(history, names, opts.tools ?? 'the built-in tools', opts.dataConverter);
  await Worker.runReplayHistory(
    {
      workflowsPath: WORKFLOWS_PATH,
      bundlerOptions: bundlerOptionsFor(opts.tools),
      replayName: 'ledgerloop-replay',
      ...(opts.dataConverter ? { dataConverter: opts.dataConverter } : {}),
    },
    history,
    opts.workflowId,
  );
}
