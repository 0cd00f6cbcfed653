/**
 * Whether a model run did its task, judged from the downstream's own storage, never from the model's words: a
 * task is done when the run stopped `completed` AND the service's database holds exactly the effect the goal asked
 * for, under one of the run's own intents, AND the run left no other effect. A run that charged the right account
 * and also marked an order fulfilled did more than it was asked: not done.
 *
 * Pure (the rows are read by runs.ts); `taskOutcome` is what the check, the demo and the bench count.
 */
import type { LedgerEvent } from '../../src/domain/ledger-events';
import type { AgentRunResult } from '../../src/domain/run';
import type { EffectRow } from '../faults/explore-invariants';

/** What a goal asks for, in the terms of the downstream's storage. */
export type TaskSpec =
  | {
      readonly kind: 'wallet_debit';
      readonly tenant: string;
      readonly account: string;
      readonly amountMinor: number;
      readonly currency: string;
    }
  | { readonly kind: 'ticket'; readonly tenant: string; readonly project: string; readonly title: string };

/** A goal as the model reads it, and the task it names. */
export interface Goal {
  readonly text: string;
  readonly task: TaskSpec;
}

/** A row of the wallet's `wallet_debits`. */
export interface DebitRow {
  readonly operationKey: string;
  readonly tenant: string;
  readonly account: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly refundedMinor: number;
}

/** A row of the ticketing service's `tickets`. */
export interface TicketRow {
  readonly openKey: string;
  readonly tenant: string;
  readonly project: string;
  readonly title: string;
  readonly status: string;
}

/** The task-relevant rows of the downstreams' databases. */
export interface TaskRows {
  readonly debits: readonly DebitRow[];
  readonly tickets: readonly TicketRow[];
  /** Every effect (`idem_effects` of each service). */
  readonly effects: readonly EffectRow[];
}

export interface TaskOutcome {
  readonly done: boolean;
  /** Why not, or what was found. */
  readonly why: string;
}

export interface TaskRun {
  readonly task?: TaskSpec;
  readonly result?: AgentRunResult;
  readonly events: readonly LedgerEvent[];
}

function intentKeys(events: readonly LedgerEvent[]): Set<string> {
  const keys = new Set<string>();
  for (const e of events) if (e.type === 'DispatchIntentRecorded') keys.add(e.intent.operationKey);
  return keys;
}

/** Whether the run did its task (see the module comment). */
export function taskOutcome(run: TaskRun, rows: TaskRows): TaskOutcome {
  const task = run.task;
  if (!task) return { done: false, why: 'no task to judge' };
  const keys = intentKeys(run.events);
  const own = rows.effects.filter((e) => keys.has(e.operationKey));
  let matching: readonly { readonly key: string }[];
  let wanted: string;
  if (task.kind === 'wallet_debit') {
    wanted = `a debit of ${task.amountMinor} ${task.currency} minor units on ${task.account}`;
    matching = rows.debits
      .filter(
        (d) =>
          keys.has(d.operationKey) &&
          d.tenant === task.tenant &&
          d.account === task.account &&
          d.amountMinor === task.amountMinor &&
          d.currency === task.currency &&
          d.refundedMinor === 0,
      )
      .map((d) => ({ key: d.operationKey }));
  } else {
    wanted = `an open ticket ${JSON.stringify(task.title)} in ${task.project}`;
    matching = rows.tickets
      .filter(
        (t) =>
          keys.has(t.openKey) &&
          t.tenant === task.tenant &&
          t.project === task.project &&
          t.title.trim() === task.title &&
          t.status === 'open',
      )
      .map((t) => ({ key: t.openKey }));
  }
  const stop = run.result?.stopReason ?? 'no result';
  if (matching.length === 0) return { done: false, why: `not found: ${wanted} under the run's intents (stop ${stop})` };
  if (matching.length > 1) return { done: false, why: `${matching.length} times ${wanted}` };
  const others = own.filter((e) => e.operationKey !== matching[0]!.key);
  if (others.length > 0)
    return {
      done: false,
      why: `${wanted}, and ${others.length} other effect(s): ${others.map((e) => e.kind).join(', ')}`,
    };
  if (stop !== 'completed') return { done: false, why: `${wanted}, but the run stopped ${stop}` };
  return { done: true, why: `${wanted}, and nothing else; completed` };
}

/** Tasks done out of runs judged. */
export function completionRate(outcomes: readonly TaskOutcome[]): { readonly done: number; readonly of: number } {
  return { done: outcomes.filter((o) => o.done).length, of: outcomes.length };
}
