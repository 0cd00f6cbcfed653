/**
 * Verified identities on a real server and wallet: a run's principal comes from a token of a configured issuer,
 * for that run; every approval decision carries an approver's token for exactly that call and is checked against
 * the run's own identity and the policy; no token goes into a history in clear text unnoticed. Each attack is one
 * start or one update an attacker could send; effects are read from the wallet's own records, and the run must
 * never have a failed workflow task. Controls: alice's start token starts its run; carol's approval token for a
 * call approves it; a client with the codec keys starts a run whose history holds no token.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { Client, type WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { startAgentRun } from '../../host/client/runs';
import { dataConverterFromEnv, generateCodecKeys } from '../../src/codec/data-converter';
import { startStack, type Stack } from '../../lab/stack';
import type { AgentRunInput } from '../../src/domain/run';
import { createDevIssuer, issueIdentityToken } from '../../src/identity/issue';
import type { TokenScope } from '../../src/identity/purpose';
import {
  decideApprovalUpdate,
  ledgerQuery,
  pendingApprovalsQuery,
  type PendingApproval,
} from '../../workflows/definitions';
import { historyHoldsAToken } from '../../test/helpers/history-token';
import { signRawToken } from '../../test/helpers/raw-token';
import { inProcessWorker, taskQueue } from '../../test/helpers/stack';
import { askedModel } from '../../test/helpers/models';
import type { Attack, AttackGroup, AttackOutcome, Control } from '../attack';

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

/** A start token: given the workflow id the run will have. */
type StartToken = (workflowId: string) => Promise<string | undefined>;

export const identityAttacks: AttackGroup = {
  name: 'identity',
  async setup({ dir }) {
    const stack: Stack = await startStack({
      name: 'security-identity',
      dataDir: mkdtempSync(path.join(dir || os.tmpdir(), 'identity-')),
      server: { headless: true },
      dataConverter: null, // the suite's own client writes plain payloads; `sealed` below encrypts
    });
    const tq = taskQueue('security-identity');
    // A client and a worker with codec keys: what a deployment that keeps tokens out of its histories runs.
    const codec = dataConverterFromEnv({ LEDGERLOOP_CODEC_KEYS: generateCodecKeys('security').keys })!;
    const sealedTq = taskQueue('security-identity-sealed');
    const sealed = new Client({
      connection: stack.connection,
      namespace: stack.server.namespace,
      dataConverter: codec,
    });
    // The scripted model, noting which run asked it: "no model call" is read from the model's side too, not only
    // from the ledger (a new run's first turn also verifies its token, in the same activity).
    const asked = askedModel();
    const workers: Worker[] = [];
    const running: Promise<void>[] = [];
    try {
      for (const account of [TENANT, 'globex'])
        await stack.walletClient.seedAccount({
          tenant: account,
          account: 'acct_1',
          balanceMinor: 10_000_000,
          currency: 'EUR',
        });
      workers.push(await inProcessWorker(stack, tq, undefined, { models: [asked.model] }));
      workers.push(await inProcessWorker(stack, sealedTq, undefined, { dataConverter: codec }));
      for (const w of workers) running.push(w.run());
    } catch (err) {
      await stack.stop();
      throw err;
    }
    const effects = async (): Promise<number> =>
      (await stack.walletClient.stats('', { prefix: true })).businessEffectCount;
    let n = 0;
    const newId = () => `identity-attack-${Date.now()}-${++n}`;
    const start = async (token: StartToken, input: AgentRunInput = runInput(1_000)): Promise<WorkflowHandle> => {
      const workflowId = newId();
      const identityToken = await token(workflowId);
      return startAgentRun(stack.client, {
        workflowId,
        taskQueue: tq,
        input,
        ...(identityToken ? { identityToken } : {}),
      });
    };
    const startFor =
      (principal: string, tenant = TENANT, over: { audience?: string; iatSec?: number; ttlSec?: number } = {}) =>
      (run: string) =>
        stack.identity.issueFor({ purpose: 'start', run }, principal, tenant, [], over);

    // The start control: alice's start token for the run starts it; it is kept for the replay attack below.
    let alicesFirst: { token: string; workflowId: string } | undefined;
    const validStart: Control = {
      name: "alice's start token for the run (same issuer, same key)",
      expected: 'completed, identity verified',
      async run() {
        const handle = await start(async (run) => {
          const token = await startFor('user:alice')(run);
          alicesFirst = { token, workflowId: run };
          return token;
        });
        const result = await handle.result();
        const created = (await handle.query(ledgerQuery)).events.find((e) => e.type === 'RunCreated');
        const verified = created?.type === 'RunCreated' && created.identity.verified;
        return {
          observed: `${result.stopReason}, identity ${verified ? 'verified' : 'refused'}`,
          accepted: result.stopReason === 'completed' && verified,
        };
      },
    };

    /** A run started with `token` must end authorization_denied with the typed code, no model call, no effect. */
    const runAttack = (name: string, code: string, token: StartToken, why?: RegExp): Attack => ({
      name,
      expected: `authorization_denied ${code}, no model call`,
      control: validStart,
      async run(): Promise<AttackOutcome> {
        const before = await effects();
        const handle = await start(token);
        const result = await handle.result();
        const ledger = await handle.query(ledgerQuery);
        const created = ledger.events.find((e) => e.type === 'RunCreated');
        const identity = created?.type === 'RunCreated' ? created.identity : undefined;
        const got = identity && !identity.verified ? identity.code : 'verified';
        const reason = identity && !identity.verified ? identity.reason : '';
        const modelCalls =
          ledger.events.filter((e) => e.type === 'ModelRequestStarted').length +
          asked.askedBy.filter((runId) => runId === handle.workflowId).length;
        const failed = await failedTasks(handle);
        return {
          observed: `${result.stopReason} ${got}, ${modelCalls} model call(s), ${failed} failed task(s)`,
          refused:
            result.stopReason === 'authorization_denied' &&
            got === code &&
            (why === undefined || why.test(reason)) &&
            modelCalls === 0 &&
            failed === 0,
          effects: (await effects()) - before,
        };
      },
    });

    /**
     * A run of alice waiting for approval of a 600.00 EUR debit (above the default policy's threshold). On a loaded
     * machine a query can time out before the worker takes it (DEADLINE_EXCEEDED), so each one has its own short
     * deadline and the wait asks again, for up to 50 s.
     */
    const pendingRun = async (): Promise<{ handle: WorkflowHandle; p: PendingApproval }> => {
      const handle = await start(startFor('user:alice'), runInput(60_000));
      const end = Date.now() + 50_000;
      for (;;) {
        const [p] = await stack.connection
          .withDeadline(Math.min(end, Date.now() + 10_000), () => handle.query(pendingApprovalsQuery))
          .catch(() => [] as PendingApproval[]);
        if (p) return { handle, p };
        if (Date.now() > end) throw new Error('the run asked for no approval');
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const scopeOf = (w: { handle: WorkflowHandle; p: PendingApproval }): TokenScope => ({
      purpose: 'approve',
      run: w.handle.workflowId,
      call: w.p.logicalCallId,
    });
    const carol = (scope: TokenScope) => stack.identity.issueFor(scope, 'manager:carol', TENANT, ['approver']);
    const waiting: { handle: WorkflowHandle; p: PendingApproval }[] = [];
    let target: Promise<{ handle: WorkflowHandle; p: PendingApproval }> | undefined;
    const attacked = () =>
      (target ??= pendingRun().then((w) => {
        waiting.push(w);
        return w;
      }));

    // The approval control: carol's token for exactly the call of another waiting run approves it, and that run
    // completes (awaited, so its debit is not counted as the effect of an attack that follows).
    let controlRun: { handle: WorkflowHandle; p: PendingApproval } | undefined;
    const validApproval: Control = {
      name: "carol's approval token for exactly the waiting call",
      expected: 'accepted; the run completes',
      async run() {
        const w = (controlRun = await pendingRun());
        await w.handle.executeUpdate(decideApprovalUpdate, {
          args: [
            {
              logicalCallId: w.p.logicalCallId,
              argumentsHash: w.p.argumentsHash,
              policyVersion: w.p.policyVersion,
              token: await carol(scopeOf(w)),
              decision: 'approve',
            },
          ],
        });
        const result = await w.handle.result();
        return { observed: `accepted; ${result.stopReason}`, accepted: result.stopReason === 'completed' };
      },
    };

    const decideAttack = (
      name: string,
      code: string,
      decision: (w: { handle: WorkflowHandle; p: PendingApproval }) => Promise<Record<string, unknown>>,
    ): Attack => ({
      name,
      expected: `update refused ${code}`,
      control: validApproval,
      async run(): Promise<AttackOutcome> {
        const w = await attacked();
        const { handle, p } = w;
        const before = await effects();
        const base = { logicalCallId: p.logicalCallId, argumentsHash: p.argumentsHash, policyVersion: p.policyVersion };
        let got: string;
        try {
          await handle.executeUpdate(decideApprovalUpdate, { args: [{ ...base, ...(await decision(w)) } as never] });
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
    /** A token an issuer signed with alice's own issuer and subject, and `principal` as written. */
    const asAlice = (principal: string) => async (w: { handle: WorkflowHandle; p: PendingApproval }) => ({
      token: await signRawToken(stack.identity.options, {
        sub: 'user:alice',
        principal,
        tenant: TENANT,
        roles: ['approver'],
        ...scopeOf(w),
      }),
      decision: 'approve',
    });

    // No token in a history in clear text: the control is a client with the codec keys.
    const sealedStart: Control = {
      name: 'a client with the codec keys starts a run; its history holds no token in clear',
      expected: 'completed; no token in the history',
      async run() {
        const workflowId = newId();
        const handle = await startAgentRun(sealed, {
          workflowId,
          taskQueue: sealedTq,
          input: runInput(1_000),
          identityToken: await startFor('user:alice')(workflowId),
        });
        const result = await handle.result();
        const inClear = await historyHoldsAToken(handle);
        return {
          observed: `${result.stopReason}; ${inClear ? 'a token in the history' : 'no token in the history'}`,
          accepted: result.stopReason === 'completed' && !inClear,
        };
      },
    };

    const stranger = await createDevIssuer(path.join(dir || os.tmpdir(), `stranger-${Date.now()}`));
    const attacks: Attack[] = [
      runAttack('run without a token', 'Identity.Invalid', () => Promise.resolve(undefined)),
      // Signed by another key, under the dev issuer's name and key id: the signature does not verify.
      runAttack('forged principal token', 'Identity.Invalid', (run) =>
        issueIdentityToken(
          { subject: 'user:alice', principal: 'user:alice', tenant: TENANT, purpose: 'start', run },
          { ...stranger.options, kid: stack.identity.options.kid },
        ),
      ),
      runAttack(
        'expired token',
        'Identity.Invalid',
        startFor('user:alice', TENANT, { iatSec: Math.floor(Date.now() / 1000) - 3_600, ttlSec: 60 }),
      ),
      runAttack('wrong audience', 'Identity.Invalid', startFor('user:alice', TENANT, { audience: 'another-service' })),
      runAttack('token for another tenant', 'Identity.Mismatch', startFor('user:alice', 'globex')),
      runAttack(
        "alice's start token replayed to start a second run after her first closed",
        'Identity.Invalid',
        () => {
          if (!alicesFirst) throw new Error('the control run did not leave its token');
          return Promise.resolve(alicesFirst.token);
        },
        /the token is for start on run /,
      ),
      runAttack(
        'a session token (names no act) used to start a run',
        'Identity.Invalid',
        () => stack.identity.issue('user:alice', TENANT),
        /names no act/,
      ),
      decideAttack('self-approval', 'Actor.Forbidden', async (w) => ({
        token: await stack.identity.issueFor(scopeOf(w), 'user:alice', TENANT, ['approver']),
        decision: 'approve',
      })),
      decideAttack('self-approval as `User:alice` (case)', 'Actor.Forbidden', asAlice('User:alice')),
      decideAttack('self-approval as ` user:alice` (leading space)', 'Identity.Unmapped', asAlice(' user:alice')),
      decideAttack('self-approval as `user:alice ` (trailing space)', 'Identity.Unmapped', asAlice('user:alice ')),
      decideAttack('self-approval as `user:aliсe` (a Cyrillic "с")', 'Identity.Unmapped', asAlice('user:ali\u0441e')),
      decideAttack('self-approval with a zero-width space', 'Identity.Unmapped', asAlice('user:al\u200bice')),
      decideAttack(
        "self-approval under another valid principal, with alice's issuer and subject",
        'Actor.Forbidden',
        asAlice('user:\u0430\u043b\u0438\u0441\u0430'),
      ),
      decideAttack("carol's approval token for another run's call", 'Identity.Invalid', async () => {
        if (!controlRun) throw new Error('no control run');
        return { token: await carol(scopeOf(controlRun)), decision: 'approve' };
      }),
      decideAttack("carol's approval token for another call of the same run", 'Identity.Invalid', async (w) => ({
        token: await carol({ ...scopeOf(w), call: 'lc_1_other' }),
        decision: 'approve',
      })),
      decideAttack("carol's session token (names no act)", 'Identity.Invalid', async () => ({
        token: await stack.identity.issue('manager:carol', TENANT, ['approver']),
        decision: 'approve',
      })),
      decideAttack('an approval token valid for 10 minutes (5 at most)', 'Identity.Invalid', async (w) => ({
        token: await stack.identity.issueFor(scopeOf(w), 'manager:carol', TENANT, ['approver'], { ttlSec: 600 }),
        decision: 'approve',
      })),
      decideAttack('approval by a role the policy does not allow', 'Actor.Forbidden', async (w) => ({
        token: await stack.identity.issueFor(scopeOf(w), 'user:bob', TENANT, ['viewer']),
        decision: 'approve',
      })),
      decideAttack('approval by another tenant’s approver', 'Actor.Forbidden', async (w) => ({
        token: await stack.identity.issueFor(scopeOf(w), 'manager:gina', 'globex', ['approver']),
        decision: 'approve',
      })),
      decideAttack('approval TTL beyond the policy', 'Approval.Invalid', async (w) => ({
        token: await carol(scopeOf(w)),
        decision: 'approve',
        ttlMs: 3_600_001,
      })),
      decideAttack('unknown decision value', 'Approval.Invalid', async (w) => ({
        token: await carol(scopeOf(w)),
        decision: 'maybe',
      })),
      decideAttack('decision value not a string', 'Approval.Invalid', async (w) => ({
        token: await carol(scopeOf(w)),
        decision: 1,
      })),
      decideAttack('absurd TTL (--as user:alice --ttl 100000000d)', 'Approval.Invalid', async (w) => ({
        token: await stack.identity.issueFor(scopeOf(w), 'user:alice', TENANT, ['approver']),
        decision: 'approve',
        ttlMs: 100_000_000 * 86_400_000,
      })),
      decideAttack('approval with a forged token', 'Identity.Invalid', async (w) => ({
        token: await issueIdentityToken(
          { subject: 'manager:carol', principal: 'manager:carol', tenant: TENANT, roles: ['approver'], ...scopeOf(w) },
          { ...stranger.options, kid: stack.identity.options.kid },
        ),
        decision: 'approve',
      })),
      {
        name: 'a start token sent in clear by a client without codec keys, under LEDGERLOOP_CODEC_STRICT',
        expected: 'Identity.TokenInClear, nothing started',
        control: sealedStart,
        async run(): Promise<AttackOutcome> {
          const workflowId = newId();
          const strictBefore = process.env['LEDGERLOOP_CODEC_STRICT'];
          process.env['LEDGERLOOP_CODEC_STRICT'] = '1';
          let got: string;
          try {
            await startAgentRun(stack.client, {
              workflowId,
              taskQueue: tq,
              input: runInput(1_000),
              identityToken: await startFor('user:alice')(workflowId),
            });
            got = 'started';
          } catch (err) {
            got = (err as { type?: string }).type ?? (err as Error).name;
          } finally {
            if (strictBefore === undefined) delete process.env['LEDGERLOOP_CODEC_STRICT'];
            else process.env['LEDGERLOOP_CODEC_STRICT'] = strictBefore;
          }
          const exists = await stack.client.workflow
            .getHandle(workflowId)
            .describe()
            .then(
              () => true,
              () => false,
            );
          return {
            observed: `${got}; ${exists ? 'a run exists' : 'no run'}`,
            refused: got === 'Identity.TokenInClear' && !exists,
            effects: exists ? 1 : 0,
          };
        },
      },
    ];
    return {
      attacks,
      async teardown() {
        for (const { handle, p } of waiting) {
          await handle
            .executeUpdate(decideApprovalUpdate, {
              args: [
                {
                  logicalCallId: p.logicalCallId,
                  argumentsHash: p.argumentsHash,
                  policyVersion: p.policyVersion,
                  token: await carol({ purpose: 'approve', run: handle.workflowId, call: p.logicalCallId }),
                  decision: 'deny',
                  reason: 'attack suite done',
                },
              ],
            })
            .catch(() => undefined);
          await handle.result().catch(() => undefined);
        }
        for (const w of workers) w.shutdown();
        await Promise.all(running.map((r) => r.catch(() => undefined)));
        await stack.stop();
      },
    };
  },
};
