/** Ledger events the reducer and explorer tests share. */
import type { LedgerEventBody } from '../../src/domain/ledger-events';

/** alice's run r1 of tenant acme opening: verified, same_key_replay, compensate at a stop, small budgets. */
export const ALICE_RUN_CREATED: LedgerEventBody = {
  type: 'RunCreated',
  runId: 'r1',
  principalId: 'user:alice',
  tenant: 'acme',
  strategy: 'same_key_replay',
  deadlineAt: '2026-01-01T00:10:00.000Z',
  budgets: { maxTurns: 4, maxToolCalls: 4, maxHistoryEvents: 2000, noProgressTurns: 2, maxProposalsPerTurn: 8 },
  reducerVersion: 1,
  onAbort: 'compensate',
  identity: { verified: true, subject: 'alice', issuer: 'test', tokenDigest: 'd', roles: [] },
};
