/**
 * A capability signer for plumbing that already holds the verification key: the tests, the demo stack, the fault
 * lab and the bench seeding and inspecting their own services (`AdminClient`'s `signer` option). It signs
 * exactly the request it is asked about (key, arguments hash, tenant, and the route's scope) with a short
 * expiry. Workers never use it: they sign at dispatch from the workflow's policy decision
 * (activities/authorize.activities.ts).
 */
import type { CapabilitySigner } from './admin-client';
import { lookupCapabilityScope, readCapabilityScope } from '../src/downstream/protocol';
import { signCapability } from '../src/capability/capability';
import type { CapabilitySigningKey } from '../src/capability/capability-keys';

/** The idempotency scope of each mutating route of the services (see each `*-service.ts`). */
export const ROUTE_SCOPES: Readonly<Record<string, string>> = {
  '/v1/debits': 'wallet.charge',
  '/v1/refunds': 'wallet.refund',
  '/v1/reservations': 'inventory.reserve',
  '/v1/releases': 'inventory.release',
  '/v1/shipments': 'shipping.schedule',
  '/v1/cancellations': 'shipping.cancel',
  '/v1/fulfilments': 'orders.fulfil',
  '/v1/emails': 'notifications.email',
  '/v1/events': 'notifications.event',
};

const TTL_MS = 60_000;

/** A signer for service `service` with `key` (the dispatch key of the stack's, lab's or test's capability trust). */
export function devCapabilitySigner(key: CapabilitySigningKey, service: string): CapabilitySigner {
  return (req) => {
    const scope =
      req.kind === 'mutation'
        ? ROUTE_SCOPES[req.path]
        : req.kind === 'read'
          ? readCapabilityScope(service)
          : lookupCapabilityScope(service, req.kind === 'seal');
    if (scope === undefined) return undefined;
    const nowMs = Date.now();
    return signCapability(
      {
        operationKey: req.key,
        keyMode: 'exact',
        argumentsHash: req.argumentsHash,
        tenant: req.tenant,
        principalId: 'dev:plumbing',
        scope,
        action: req.kind,
        resource: `${service}${req.path}`,
        policyVersion: 'dev',
        expiresAt: new Date(nowMs + TTL_MS).toISOString(),
      },
      key,
      { audience: service, nowMs },
    ).token;
  };
}
