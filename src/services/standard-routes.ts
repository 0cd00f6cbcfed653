/**
 * The routes every downstream service exposes besides its business endpoints: health, the declared contract,
 * reconciliation lookup by operation key, and the admin endpoints for evidence (stats) and fault injection.
 */
import { DownstreamErrorCode, type FaultRule, type ServiceContract } from '../downstream/protocol';
import { FaultRuleSchema } from './faults';
import { HttpError, readJsonBody, sendJson, type Router } from './http-kit';
import type { ServiceRuntime } from './idempotent-route';

/**
 * Registers `GET /health`, `GET /v1/contract`, `GET /v1/operations/:key[?seal=true]`, `GET /admin/stats`,
 * `POST /admin/faults` and `DELETE /admin/faults` on `router`. `GET /admin/stats?key=&prefix=true` counts all keys.
 */
export function registerStandardRoutes(router: Router, service: string, runtime: ServiceRuntime): Router {
  const { store, faults } = runtime;
  return router
    .on('GET', '/health', ({ res }) => sendJson(res, 200, { service, status: 'ok' }))
    .on('GET', '/v1/contract', ({ res }) => {
      const contract: ServiceContract = { service, idempotencyRetentionMs: store.retentionMs };
      sendJson(res, 200, contract);
    })
    .on('GET', '/v1/operations/:key', ({ res, params, query }) => {
      const key = params['key'] ?? '';
      const found = store.lookup(key, { seal: isTrue(query.get('seal')) });
      if (found.kind === 'found') {
        sendJson(res, 200, found.record);
        return;
      }
      const message = found.sealed ? `no effect under ${key}; the key is sealed` : `no record under ${key}`;
      sendJson(res, 404, { error: DownstreamErrorCode.NotFound, message, sealed: found.sealed });
    })
    .on('GET', '/admin/stats', ({ res, query }) => {
      const key = query.get('key');
      const prefix = isTrue(query.get('prefix'));
      // An empty key is allowed as a prefix: it counts every key of the service.
      if (key === null || (key === '' && !prefix)) {
        throw new HttpError(
          400,
          DownstreamErrorCode.BadRequest,
          'key is required (may be empty only with prefix=true)',
        );
      }
      sendJson(res, 200, store.stats(key, prefix));
    })
    .on('POST', '/admin/faults', async ({ req, res }) => {
      const parsed = FaultRuleSchema.safeParse(await readJsonBody(req, runtime.bodyLimitBytes));
      if (!parsed.success) {
        throw new HttpError(400, DownstreamErrorCode.BadRequest, `invalid fault rule: ${parsed.error.message}`);
      }
      const rule: FaultRule = parsed.data;
      sendJson(res, 201, { id: faults.arm(rule) });
    })
    .on('DELETE', '/admin/faults', ({ res }) => {
      faults.clear();
      sendJson(res, 200, { cleared: true });
    });
}

function isTrue(value: string | null): boolean {
  return value === 'true' || value === '1';
}
