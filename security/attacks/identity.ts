/**
 * Verified identities on a real server and wallet: a run's principal comes from a token of a configured issuer,
 * and every approval decision carries the approver's token and is checked against the policy. Each attack is one
 * start or one update an attacker could send; effects are read from the wallet's own records, and the run must
 * never have a failed workflow task.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { startAgentRun } from '../../src/client/runs';
import { startStack, type Stack } from '../../lab/stack';
import type { AgentRunInput } from '../../src/domain/run';
import { createDevIssuer, issueIdentityToken } from '../../src/identity/issue';
import {
  decideApprovalUpdate,
  ledgerQuery,
  pendingApprovalsQuery,
  type PendingApproval,
} from '../../workflows/definitions';
import { inProcessWorker, taskQueue } from '../../test/helpers/stack';
import { askedModel } from '../../test/helpers/models';
import type { Attack, AttackGroup, AttackOutcome } from '../attack';

const TENANT = 'acme';

function runInput(minor: number): AgentRunInput {
  return {
    principal: { id: 'user:alice', tenant: TENANT },
    goal: `Charge ${minor / 100} EUR`,
    strategy: 'same_key_replay',
    planner: {
      kind: 'scripted',
      scenario: 'wallet-debit',
      vars: { account: 'acct_1', amount: { minor, currency: 'EUR' } },
    },
    deadlineAt: new Date(Date.now() + 120_000).toISOString(),
    caps: { toolAttemptMs: 3_000, reconcileAttemptMs: 2_000 },
  };
}

async function failedTasks(handle: WorkflowHandle): Promise<number> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).filter((e) => e.workflowTaskFailedEventAttributes).length;
}

/** The typed failure type an update refusal carries, or how it failed otherwise. */
function refusalType(err: unknown): string {
  const cause = (err as { cause?: { name?: string; type?: string | null } }).cause;
  return cause?.type ?? cause?.name ?? (err as Error).name ?? 'error';
}

export const identityAttacks: AttackGroup = {
  name: 'identity',
  async setup({ dir }) {
    const stack: Stack = await startStack({
      name: 'security-identity',
      dataDir: mkdtempSync(path.join(dir || os.tmpdir(), 'identity-')),
      server: { headless: true },
    });
    const tq = taskQueue('security-identity');
    // The scripted model, noting which run asked it: "no model call" is read from the model's side too, not only
    // from the ledger (a new run's first turn also verifies its token, in the same activity).
    const asked = askedModel();
    let worker: Worker | undefined;
    let running: Promise<void> | undefined;
    try {
      await stack.walletClient.seedAccount({
        tenant: TENANT,
        account: 'acct_1',
        balanceMinor: 10_000_000,
        currency: 'EUR',
      });
      await stack.walletClient.seedAccount({
        tenant: 'globex',
        account: 'acct_1',
        balanceMinor: 10_000_000,
        currency: 'EUR',
      });
      worker = await inProcessWorker(stack, tq, undefined, { models: [asked.model] });
      running = worker.run();
    } catch (err) {
      await stack.stop();
      throw err;
    }
    const effects = async (): Promise<number> =>
      (await stack.walletClient.stats('', { prefix: true })).businessEffectCount;
    let n = 0;
    const start = async (token: string | undefined, input: AgentRunInput = runInput(1_000)): Promise<WorkflowHandle> =>
      startAgentRun(stack.client, {
        workflowId: `identity-attack-${Date.now()}-${++n}`,
        taskQueue: tq,
        input,
        ...(token ? { identityToken: token } : {}),
      });

    /** A run started with `token` must end authorization_denied with the typed code, no model call, no effect. */
    const runAttack = (name: string, code: string, token: () => Promise<string | undefined>): Attack => ({
      name,
      expected: `authorization_denied ${code}, no model call`,
      async run(): Promise<AttackOutcome> {
        const before = await effects();
        const handle = await start(await token());
        const result = await handle.result();
        const ledger = await handle.query(ledgerQuery);
        const created = ledger.events.find((e) => e.type === 'RunCreated');
        const identity = created?.type === 'RunCreated' ? created.identity : undefined;
        const got = identity && !identity.verified ? identity.code : 'verified';
        const modelCalls =
          ledger.events.filter((e) => e.type === 'ModelRequestStarted').length +
          asked.askedBy.filter((runId) => runId === handle.workflowId).length;
        const failed = await failedTasks(handle);
        return {
          observed: `${result.stopReason} ${got}, ${modelCalls} model call(s), ${failed} failed task(s)`,
          refused: result.stopReason === 'authorization_denied' && got === code && modelCalls === 0 && failed === 0,
          effects: (await effects()) - before,
        };
      },
    });

    // One run of alice waiting for approval of a 600.00 EUR debit (above the default policy's approval threshold).
    let waiting: { handle: WorkflowHandle; p: PendingApproval } | undefined;
    const pendingRun = async () => {
      if (waiting) return waiting;
      const handle = await start(await stack.identity.issue('user:alice', TENANT), runInput(60_000));
      const end = Date.now() + 30_000;
      for (;;) {
        const [p] = await handle.query(pendingApprovalsQuery).catch(() => [] as PendingApproval[]);
        if (p) return (waiting = { handle, p });
        if (Date.now() > end) throw new Error('the run asked for no approval');
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const decideAttack = (
      name: string,
      code: string,
      decision: (p: PendingApproval) => Promise<Record<string, unknown>>,
    ): Attack => ({
      name,
      expected: `update refused ${code}`,
      async run(): Promise<AttackOutcome> {
        const { handle, p } = await pendingRun();
        const before = await effects();
        const base = { logicalCallId: p.logicalCallId, argumentsHash: p.argumentsHash, policyVersion: p.policyVersion };
        let got: string;
        try {
          await handle.executeUpdate(decideApprovalUpdate, { args: [{ ...base, ...(await decision(p)) } as never] });
          got = 'accepted';
        } catch (err) {
          got = refusalType(err);
        }
        const failed = await failedTasks(handle);
        const still = (await handle.query(pendingApprovalsQuery)).some((x) => x.logicalCallId === p.logicalCallId);
        return {
          observed: `${got}, ${failed} failed task(s), ${still ? 'still pending' : 'no longer pending'}`,
          refused: got === code && failed === 0 && still,
          effects: (await effects()) - before,
        };
      },
    });

    const stranger = await createDevIssuer(path.join(dir || os.tmpdir(), `stranger-${Date.now()}`));
    const alice = () => stack.identity.issue('user:alice', TENANT, ['approver']);
    const carol = () => stack.identity.issue('manager:carol', TENANT, ['approver']);
    const attacks: Attack[] = [
      runAttack('run without a token', 'Identity.Invalid', () => Promise.resolve(undefined)),
      // Signed by another key, under the dev issuer's name and key id: the signature does not verify.
      runAttack('forged principal token', 'Identity.Invalid', () =>
        issueIdentityToken(
          { subject: 'user:alice', principal: 'user:alice', tenant: TENANT },
          { ...stranger.options, kid: stack.identity.options.kid },
        ),
      ),
      runAttack('expired token', 'Identity.Invalid', () =>
        stack.identity.issue('user:alice', TENANT, [], { iatSec: Math.floor(Date.now() / 1000) - 3_600, ttlSec: 60 }),
      ),
      runAttack('wrong audience', 'Identity.Invalid', () =>
        stack.identity.issue('user:alice', TENANT, [], { audience: 'another-service' }),
      ),
      runAttack('token for another tenant', 'Identity.Mismatch', () => stack.identity.issue('user:alice', 'globex')),
      decideAttack('self-approval', 'Actor.Forbidden', async () => ({ token: await alice(), decision: 'approve' })),
      decideAttack('approval by a role the policy does not allow', 'Actor.Forbidden', async () => ({
        token: await stack.identity.issue('user:bob', TENANT, ['viewer']),
        decision: 'approve',
      })),
      decideAttack('approval by another tenant’s approver', 'Actor.Forbidden', async () => ({
        token: await stack.identity.issue('manager:gina', 'globex', ['approver']),
        decision: 'approve',
      })),
      decideAttack('approval TTL beyond the policy', 'Approval.Invalid', async () => ({
        token: await carol(),
        decision: 'approve',
        ttlMs: 3_600_001,
      })),
      decideAttack('unknown decision value', 'Approval.Invalid', async () => ({
        token: await carol(),
        decision: 'maybe',
      })),
      decideAttack('decision value not a string', 'Approval.Invalid', async () => ({
        token: await carol(),
        decision: 1,
      })),
      decideAttack('absurd TTL (--as user:alice --ttl 100000000d)', 'Approval.Invalid', async () => ({
        token: await alice(),
        decision: 'approve',
        ttlMs: 100_000_000 * 86_400_000,
      })),
      decideAttack('approval with a forged token', 'Identity.Invalid', async () => ({
        token: await issueIdentityToken(
          { subject: 'manager:carol', principal: 'manager:carol', tenant: TENANT, roles: ['approver'] },
          { ...stranger.options, kid: stack.identity.options.kid },
        ),
        decision: 'approve',
      })),
    ];
    return {
      attacks,
      async teardown() {
        if (waiting) {
          const { handle, p } = waiting;
          const base = {
            logicalCallId: p.logicalCallId,
            argumentsHash: p.argumentsHash,
            policyVersion: p.policyVersion,
          };
          await handle
            .executeUpdate(decideApprovalUpdate, {
              args: [{ ...base, token: await carol(), decision: 'deny', reason: 'attack suite done' }],
            })
            .catch(() => undefined);
          await handle.result().catch(() => undefined);
        }
        worker?.shutdown();
        await running?.catch(() => undefined);
        await stack.stop();
      },
    };
  },
};
