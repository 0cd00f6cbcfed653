/**
 * The signer signs nothing it was merely handed. The real dispatch activity (in a MockActivityEnvironment, so no
 * workflow has to be subverted to hand it a forged decision) is given claim sets a workflow could forge; a real
 * wallet that verifies capabilities is the downstream. Each attack must end in `Capability.ClaimsMismatch`,
 * with no request sent and no effect in the wallet's own database.
 */
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createDispatchActivities } from '../../activities/dispatch.activities';
import type { DispatchRequest } from '../../src/domain/activity-contracts';
import { hashCanonical, type Json } from '../../src/domain/canonical';
import { Failure } from '../../src/domain/failures';
import type { AuthorizationInput, DispatchAuthorization } from '../../src/domain/authorization';
import { generateCapabilityTrust } from '../../src/capability/capability-keys';
import { DEFAULT_POLICY } from '../../src/domain/policy-format';
import { policyDigest, StaticPolicyStore } from '../../src/stores/policy-store';
import { spawnedClient, spawnService } from '../../services/spawn';
import type { Attack, AttackGroup, AttackOutcome, Control } from '../attack';

const TENANT = 'acme';
const opKey = (n: string) => `op_${hashCanonical({ signer: n, at: Date.now(), r: Math.random() }).slice(0, 40)}`;
const bodyOf = (minor: number): Json => ({ tenant: TENANT, account: 'acct_1', amount: { minor, currency: 'EUR' } });

/** The authorization input a workflow would evaluate for a wallet debit of `body`. */
function inputFor(key: string, body: Json): AuthorizationInput {
  const minor = (body as { amount: { minor: number } }).amount.minor;
  return {
    principalId: 'user:mallory',
    tenant: TENANT,
    logicalCallId: `lc_${key.slice(3, 15)}`,
    operationKey: key,
    argumentsHash: hashCanonical(body),
    toolName: 'wallet_debit',
    scope: 'wallet.charge',
    request: {
      action: 'wallet.debit',
      resource: `${TENANT}/account/acct_1`,
      resourceTenant: TENANT,
      amountMinor: minor,
      currency: 'EUR',
    },
    origin: 'model',
    toolApprovalReason: null,
    recentDispatches: [],
    keyMode: 'exact',
    nowMs: Date.now(),
  };
}

/**
 * A decision "allowed" whatever the policy says, for the current policy: what a subverted workflow could hand the
 * signer. (`_input` names the call it claims to be for; the signer derives the call from the request itself.)
 */
function forgedDecision(_input: AuthorizationInput): DispatchAuthorization {
  return { policyDigest: policyDigest(DEFAULT_POLICY), expiresAt: new Date(Date.now() + 60_000).toISOString() };
}

function requestFor(
  key: string,
  body: Json,
  authorization: DispatchAuthorization,
  intentHash = hashCanonical(body),
): DispatchRequest {
  return {
    intent: {
      runId: 'attack-run',
      providerCallId: 'call_attack',
      logicalCallId: `lc_${key.slice(3, 15)}`,
      operationKey: key,
      toolName: 'wallet_debit',
      toolVersion: 1,
      argumentsHash: intentHash,
      principalId: 'user:mallory',
      tenant: TENANT,
      policyVersion: DEFAULT_POLICY.version,
      deadlineAt: new Date(Date.now() + 600_000).toISOString(),
    },
    service: 'wallet',
    route: '/v1/debits',
    body,
    strategy: 'same_key_replay',
    dispatch: 1,
    keyUsed: key,
    authorization,
    intentRecordedAt: new Date().toISOString(),
    idempotency: 'idempotent_by_key',
  };
}

export const signerAttacks: AttackGroup = {
  name: 'capability-signer',
  async setup({ dir }) {
    const trust = generateCapabilityTrust();
    const wallet = await spawnService('wallet', { dbPath: path.join(dir, 'wallet.db'), env: { ...trust.serviceEnv } });
    // No signer: what reaches the wallet carries only what the dispatch activity signed. Admin routes with the token.
    const client = spawnedClient(wallet);
    await client.seedAccount({ tenant: TENANT, account: 'acct_1', balanceMinor: 10_000_000, currency: 'EUR' });
    const { dispatchTool } = createDispatchActivities({
      services: { wallet: client },
      workerIdentity: 'attack-signer',
      authorize: { policies: new StaticPolicyStore(DEFAULT_POLICY), capabilityKey: trust.dispatch },
    });

    /** Runs the real dispatch activity once; a refusal is a typed ClaimsMismatch failure and no request logged. */
    const dispatch = async (req: DispatchRequest): Promise<AttackOutcome> => {
      const env = new MockActivityEnvironment({
        attempt: 1,
        currentAttemptScheduledTimestampMs: Date.now(),
        scheduledTimestampMs: Date.now(),
      });
      let observed: string;
      let refused = false;
      try {
        const r = (await env.run(dispatchTool, req)) as Awaited<ReturnType<typeof dispatchTool>>;
        observed = `${r.httpStatus} ${r.outcome}`;
      } catch (err) {
        const type = err instanceof ApplicationFailure ? err.type : undefined;
        observed = `${type ?? (err as Error).name}${err instanceof ApplicationFailure && err.nonRetryable ? ' (non-retryable)' : ''}`;
        refused = type === Failure.CapabilityClaimsMismatch;
      }
      const stats = await client.stats(req.keyUsed);
      return { observed, refused: refused && stats.dispatchCount === 0, effects: stats.businessEffectCount };
    };

    // The control: a decision the policy does allow (a 1.00 EUR debit) is signed, sent, and charges once.
    const allowedDecision: Control = {
      name: 'a decision the policy allows (a 1.00 EUR debit), handed to the signer',
      expected: 'signed and sent, 1 effect',
      async run() {
        const k = opKey('control');
        const body = bodyOf(100);
        const out = await dispatch(requestFor(k, body, forgedDecision(inputFor(k, body))));
        return { observed: `${out.observed}, ${out.effects} effect(s)`, accepted: !out.refused && out.effects === 1 };
      },
    };

    const attacks: Attack[] = [
      {
        name: 'a claim set the policy would deny (over the debit limit), handed to the signer as allowed',
        expected: 'Capability.ClaimsMismatch, nothing sent',
        control: allowedDecision,
        run: () => {
          const k = opKey('deny');
          const body = bodyOf(500_000);
          return dispatch(requestFor(k, body, forgedDecision(inputFor(k, body))));
        },
      },
      {
        name: 'an approval-requiring amount with no approver, handed to the signer as allowed',
        expected: 'Capability.ClaimsMismatch, nothing sent',
        control: allowedDecision,
        run: () => {
          const k = opKey('approval');
          const body = bodyOf(60_000);
          return dispatch(requestFor(k, body, forgedDecision(inputFor(k, body))));
        },
      },
      {
        name: 'a decision for a small debit, with a larger body (and the intent hash of the small one)',
        expected: 'Capability.ClaimsMismatch, nothing sent',
        control: allowedDecision,
        run: () => {
          const k = opKey('body');
          const small = bodyOf(100);
          return dispatch(requestFor(k, bodyOf(90_000), forgedDecision(inputFor(k, small)), hashCanonical(small)));
        },
      },
      {
        name: "an intent naming another tenant than its body (a debit of acme's account for globex)",
        expected: 'Capability.ClaimsMismatch, nothing sent',
        control: allowedDecision,
        run: () => {
          const k = opKey('tenant');
          const body = bodyOf(100);
          const req = requestFor(k, body, forgedDecision(inputFor(k, body)));
          return dispatch({ ...req, intent: { ...req.intent, tenant: 'globex' } });
        },
      },
    ];
    return { attacks, teardown: () => wallet.stop() };
  },
};
