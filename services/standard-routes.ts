/**
 * The routes every downstream service exposes besides its business endpoints. Public listener: health, the
 * declared contract, and reconciliation by operation key (lookup, seal), each with a capability for that key and
 * tenant. Admin listener (loopback, admin token): evidence (stats, refusal counters) and, in a lab start only,
 * fault injection.
 */
import { z } from 'zod';
import { DownstreamErrorCode, type FaultRule, type ServiceContract } from '../src/downstream/protocol';
import { CAPABILITY_HEADER } from '../src/capability/capability';
import { Id } from './body-schemas';
import { FaultRuleSchema } from './faults';
import { HttpError, json, readJsonBody, type RequestContext, type Router } from './http-kit';
import type { ServiceRuntime } from './idempotent-route';
import { verifyLookupCapability } from './lookup-capability';

const SealBody = z.strictObject({ tenant: Id });

/**
 * Registers `GET /health`, `GET /v1/contract`, `GET /v1/operations/:key?tenant=T` and
 * `POST /v1/operations/:key/seal` (`{ "tenant": T }`) on the public `router`. A lookup or seal without a
 * capability for exactly that key, tenant and `lookup:`/`seal:<service>` scope is 403 `Capability.Invalid`;
 * `GET ...?seal=` is 405 `Lookup.SealRequiresPost` (a GET never changes state). Both count their refusals.
 */
export function registerStandardRoutes(router: Router, service: string, runtime: ServiceRuntime): Router {
  const { store } = runtime;
  const authorize = (c: RequestContext, key: string, tenant: string, seal: boolean): void => {
    if (runtime.capabilityKeys === undefined) return; // --insecure-dev only
    try {
      verifyLookupCapability(c.req.header(CAPABILITY_HEADER), runtime.capabilityKeys, {
        service,
        key,
        tenant,
        seal,
      });
    } catch (err) {
      store.countRefusal(DownstreamErrorCode.CapabilityInvalid, 'lookup');
      const message = err instanceof Error ? err.message : String(err);
      throw new HttpError(403, DownstreamErrorCode.CapabilityInvalid, message);
    }
  };
  const answer = (tenant: string, key: string, seal: boolean): Response => {
    // A lab start's `refuse_seal` fault: the downstream answers as a lookup would and does not seal a missing key.
    const refuse = seal && runtime.faults?.refuseSeal(`/v1/operations/${key}/seal`) === true;
    const found = store.lookup(tenant, key, { seal: seal && !refuse });
    if (found.kind === 'found') return json(200, found.record);
    const message = found.sealed ? `no effect under ${key}; the key is sealed` : `no record under ${key}`;
    return json(404, { error: DownstreamErrorCode.NotFound, message, sealed: found.sealed });
  };
  return router
    .on('GET', '/health', () => json(200, { service, status: 'ok' }))
    .on('GET', '/v1/contract', () => {
      const contract: ServiceContract = { service, idempotencyRetentionMs: store.retentionMs };
      return json(200, contract);
    })
    .on('GET', '/v1/operations/:key', (c) => {
      const key = c.req.param('key') ?? '';
      if (c.req.query('seal') !== undefined) {
        store.countRefusal(DownstreamErrorCode.SealRequiresPost, 'lookup');
        throw new HttpError(405, DownstreamErrorCode.SealRequiresPost, `seal with POST /v1/operations/${key}/seal`);
      }
      const tenant = c.req.query('tenant') ?? '';
      if (!Id.safeParse(tenant).success) {
        store.countRefusal(DownstreamErrorCode.BadRequest, 'lookup');
        throw new HttpError(400, DownstreamErrorCode.BadRequest, 'tenant is required (?tenant=)');
      }
      authorize(c, key, tenant, false);
      return answer(tenant, key, false);
    })
    .on('POST', '/v1/operations/:key/seal', async (c) => {
      const key = c.req.param('key') ?? '';
      const parsed = SealBody.safeParse(await readJsonBody(c));
      if (!parsed.success) {
        store.countRefusal(DownstreamErrorCode.BadRequest, 'lookup');
        throw new HttpError(400, DownstreamErrorCode.BadRequest, 'body must be { "tenant": "..." }');
      }
      authorize(c, key, parsed.data.tenant, true);
      return answer(parsed.data.tenant, key, true);
    });
}

/**
 * Registers the admin routes every service shares on the admin `router`: `GET /admin/stats?key=&prefix=true`,
 * `GET /admin/refusals`, and, only when the runtime has a fault injector (a lab start), `POST|DELETE /admin/faults`.
 */
export function registerStandardAdminRoutes(router: Router, runtime: ServiceRuntime): Router {
  const { store, faults } = runtime;
  router
    .on('GET', '/admin/stats', (c) => {
      const key = c.req.query('key');
      const prefix = isTrue(c.req.query('prefix'));
      // An empty key is allowed as a prefix: it counts every key of the service.
      if (key === undefined || (key === '' && !prefix)) {
        throw new HttpError(
          400,
          DownstreamErrorCode.BadRequest,
          'key is required (may be empty only with prefix=true)',
        );
      }
      return json(200, store.stats(key, prefix));
    })
    .on('GET', '/admin/refusals', () => json(200, store.refusals()));
  if (faults === undefined) return router;
  return router
    .on('POST', '/admin/faults', async (c) => {
      const parsed = FaultRuleSchema.safeParse(await readJsonBody(c));
      if (!parsed.success) {
        throw new HttpError(400, DownstreamErrorCode.BadRequest, `invalid fault rule: ${parsed.error.message}`);
      }
      const rule: FaultRule = parsed.data;
      return json(201, { id: faults.arm(rule) });
    })
    .on('GET', '/admin/faults', () => json(200, { rules: faults.states() }))
    .on('DELETE', '/admin/faults', () => {
      faults.clear();
      return json(200, { cleared: true });
    });
}

function isTrue(value: string | undefined): boolean {
  return value === 'true' || value === '1';
}
