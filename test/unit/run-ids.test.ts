/**
 * A run's workflow id begins with its tenant (`<tenant>:run-...`): the frontend's authorizer reads the tenant from
 * it, so the client side must produce it, and refuse what the frontend would read as another tenant's.
 */
import { newRunWorkflowId, RunIdError, tenantOfWorkflowId } from '../../host/client/run-ids';
import { newWorkflowId } from '../../cli/commands/start';
import { startAgentRun } from '../../host/client/runs';
import type { Client } from '@temporalio/client';
import type { AgentRunInput } from '../../src/domain/run';

test('a new run id begins with its tenant and reads back as that tenant', () => {
  const id = newRunWorkflowId('acme', Date.UTC(2026, 0, 1));
  expect(id).toMatch(/^acme:run-[0-9a-z]+-[0-9a-f]{6}$/);
  expect(tenantOfWorkflowId(id)).toBe('acme');
  expect(newWorkflowId('globex', Date.now())).toMatch(/^globex:run-/);
});

test.each([
  ['a colon', 'acme:x'],
  ['a slash', 'acme/x'],
  ['a space', 'acme corp'],
  ['the system prefix', 'ledgerloop-quota'],
  ['nothing', ''],
])('a tenant with %s cannot head a run id', (_what, tenant) => {
  expect(() => newRunWorkflowId(tenant)).toThrow(RunIdError);
});

test.each([
  ['acme:run-1', 'acme'],
  ['acme.eu@corp-1:run-1', 'acme.eu@corp-1'],
  ['run-acme-1', undefined],
  ['acme:', undefined],
  [':run-1', undefined],
  ['ledgerloop-quota:acme', undefined],
  ['opening-failure-same_key_replay-1', undefined],
])('the tenant of %s is %s', (id, tenant) => {
  expect(tenantOfWorkflowId(id)).toBe(tenant);
});

describe('startAgentRun', () => {
  const input = {
    principal: { id: 'user:alice', tenant: 'acme' },
    goal: 'g',
    strategy: 'same_key_replay',
    planner: { kind: 'scripted', scenario: 'wallet-debit' },
    deadlineAt: new Date(Date.now() + 60_000).toISOString(),
  } as AgentRunInput;
  const started: string[] = [];
  const client = {
    workflow: {
      start: (_type: string, o: { workflowId: string }) => {
        started.push(o.workflowId);
        return Promise.resolve({ workflowId: o.workflowId });
      },
    },
  } as unknown as Client;

  test("names the run after the principal's tenant when no id is given, and keeps an id that names none", async () => {
    await startAgentRun(client, { taskQueue: 'q', input });
    await startAgentRun(client, { workflowId: 'lab-run-1', taskQueue: 'q', input });
    expect(started[0]).toMatch(/^acme:run-/);
    expect(started[1]).toBe('lab-run-1');
  });

  test("refuses an id that names another tenant than the run's principal, starting nothing", async () => {
    const before = started.length;
    await expect(startAgentRun(client, { workflowId: 'globex:run-1', taskQueue: 'q', input })).rejects.toThrow(
      RunIdError,
    );
    expect(started.length).toBe(before);
  });
});
