/**
 * The task judge of the local model's runs (lab/local-model/tasks.ts): a task counts as done only from the
 * downstream's own rows: the asked-for effect once, under the run's intent, nothing else, and a `completed` stop.
 * Each refusal has its positive control beside it (the same records with the one difference undone).
 */
import { taskOutcome, type TaskRows, type TaskRun, type TaskSpec } from '../../lab/local-model/tasks';
import type { LedgerEvent } from '../../src/domain/ledger-events';
import type { AgentRunResult, StopReason } from '../../src/domain/run';

const debitTask: TaskSpec = {
  kind: 'wallet_debit',
  tenant: 'acme',
  account: 'acct_1',
  amountMinor: 1250,
  currency: 'EUR',
};
const ticketTask: TaskSpec = { kind: 'ticket', tenant: 'acme', project: 'ops', title: 'VPN drops every hour' };

const intentFor = (key: string): LedgerEvent =>
  ({
    type: 'DispatchIntentRecorded',
    seq: 1,
    at: '',
    logicalCallId: key,
    intent: { operationKey: key },
  }) as unknown as LedgerEvent;
const result = (stopReason: StopReason): AgentRunResult =>
  ({ stopReason, detail: '', projectionHash: '', eventCount: 0, calls: [], leftStanding: [] }) as AgentRunResult;
const run = (task: TaskSpec, keys: string[], stop: StopReason = 'completed'): TaskRun => ({
  task,
  result: result(stop),
  events: keys.map(intentFor),
});
const debit = (key: string, over: Partial<TaskRows['debits'][number]> = {}) => ({
  operationKey: key,
  tenant: 'acme',
  account: 'acct_1',
  amountMinor: 1250,
  currency: 'EUR',
  refundedMinor: 0,
  ...over,
});
const effect = (key: string, kind = 'debit') => ({ service: 'wallet', operationKey: key, receipt: `r-${key}`, kind });
const rows = (
  debits: TaskRows['debits'],
  effects: TaskRows['effects'],
  tickets: TaskRows['tickets'] = [],
): TaskRows => ({
  debits,
  tickets,
  effects,
});

describe('a local model run did its task', () => {
  const good = rows([debit('op_a')], [effect('op_a')]);

  test('the asked-for debit once, under the run intent, nothing else, completed: done', () => {
    expect(taskOutcome(run(debitTask, ['op_a']), good)).toMatchObject({ done: true });
  });

  test.each<[string, TaskRun, TaskRows]>([
    ['a completed run with no effect (the model only said it did it)', run(debitTask, []), rows([], [])],
    ['another amount', run(debitTask, ['op_a']), rows([debit('op_a', { amountMinor: 1200 })], [effect('op_a')])],
    ['another account', run(debitTask, ['op_a']), rows([debit('op_a', { account: 'acct_2' })], [effect('op_a')])],
    [
      'a debit refunded by the saga',
      run(debitTask, ['op_a'], 'budget_exhausted'),
      rows([debit('op_a', { refundedMinor: 1250 })], [effect('op_a')]),
    ],
    ['a debit of another run', run(debitTask, ['op_b']), good],
    [
      'the debit and another effect',
      run(debitTask, ['op_a', 'op_o']),
      rows([debit('op_a')], [effect('op_a'), effect('op_o', 'fulfilled')]),
    ],
    ['the debit, but the run did not complete', run(debitTask, ['op_a'], 'tool_failed'), good],
  ])('%s: not done', (_what, r, rs) => {
    expect(taskOutcome(r, rs).done).toBe(false);
  });

  test('a ticket: the exact title in the project, open; another title is not the task', () => {
    const ticket = (title: string, status = 'open') => ({
      openKey: 'op_t',
      tenant: 'acme',
      project: 'ops',
      title,
      status,
    });
    const effects = [effect('op_t', 'ticket')];
    expect(taskOutcome(run(ticketTask, ['op_t']), rows([], effects, [ticket('VPN drops every hour')])).done).toBe(true);
    expect(taskOutcome(run(ticketTask, ['op_t']), rows([], effects, [ticket('VPN drops')])).done).toBe(false);
    expect(
      taskOutcome(run(ticketTask, ['op_t']), rows([], effects, [ticket('VPN drops every hour', 'cancelled')])).done,
    ).toBe(false);
  });
});
