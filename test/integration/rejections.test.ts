/**
 * Bad input gets a typed rejection, recorded in the ledger, returned to the model as a tool result, and never
 * reaches the downstream: the wallet's own database shows no request at all.
 */
import type { Stack } from '../../lab/stack';
import { input, runAgent } from '../helpers/run';
import { startTestStack } from '../helpers/stack';

jest.setTimeout(120_000);
let stack: Stack;
beforeAll(async () => {
  stack = await startTestStack('reject');
  await stack.walletClient.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 10_000, currency: 'EUR' });
});
afterAll(async () => {
  await stack?.stop();
});

async function totalRequests(): Promise<number> {
  return (await stack.walletClient.stats('', { prefix: true })).dispatchCount;
}

describe('rejected proposals never reach the wallet', () => {
  test.each([
    ['malformed JSON arguments', 'malformed-arguments', {}, 'Proposal.Malformed'],
    ['an amount over the policy limit', 'over-limit-debit', { account: 'acct_1' }, 'Authorization.Denied'],
    [
      'a float amount (schema violation)',
      'wallet-debit',
      { account: 'acct_1', amount: { minor: 12.5, currency: 'EUR' } },
      'Proposal.SchemaViolation',
    ],
    [
      'an account id with a path in it',
      'wallet-debit',
      { account: '../globex/acct_9', amount: { minor: 100, currency: 'EUR' } },
      'Proposal.SchemaViolation',
    ],
  ])('%s: typed rejection, dispatch_count 0', async (_name, scenario, vars, code) => {
    const before = await totalRequests();
    const out = await runAgent(stack, 'reject', input({ scenario, vars }));
    expect(await totalRequests()).toBe(before);
    const rejection = out.ledger.events.find((e) => e.type === 'ProposalRejected' || e.type === 'AuthorizationDenied');
    expect(rejection).toBeDefined();
    expect(out.ledger.events.some((e) => e.type === 'DispatchIntentRecorded')).toBe(false);
    expect(out.result.calls[0]?.state).toBe('FAILED');
    expect(out.result.stopReason).toBe('completed');
    // The model was told, as data, why its proposal was refused.
    expect(out.result.finalText).toContain('FAILED');
    const call = out.ledger.projection.calls[out.result.calls[0]!.logicalCallId];
    expect(call?.errorCode).toBe(code);
  });

  test('a model that keeps proposing ends on the turn budget with a typed stop reason', async () => {
    const out = await runAgent(
      stack,
      'budget',
      input({ scenario: 'endless-debits', vars: { account: 'acct_1' }, budgets: { maxTurns: 3, maxToolCalls: 10 } }),
    );
    expect(out.result.stopReason).toBe('budget_exhausted');
    expect(out.result.detail).toContain('turns');
  });
});
