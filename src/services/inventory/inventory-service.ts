/**
 * The inventory downstream service: reserves and releases stock under the idempotency contract of
 * `src/downstream/protocol.ts` (shared store, fences, lookup, stats and faults come with `startService`).
 *
 * Business routes: `POST /v1/reservations`, `POST /v1/releases` (by `reservationOperationKey`),
 * `GET /v1/stock/:tenant/:sku`. Admin listener: `POST /admin/stock` (seed the quantity on hand).
 */
import { DownstreamErrorCode } from '../../downstream/protocol';
import { parseAdminBody } from '../body-schemas';
import { HttpError, sendJson } from '../http-kit';
import { mutationHandler } from '../idempotent-route';
import { startService, type RunningService, type ServiceDefinition, type ServiceHostOptions } from '../service-host';
import {
  applyRelease,
  applyReserve,
  getStock,
  migrateInventory,
  ReleaseBody,
  ReserveBody,
  SeedStockBody,
  seedStock,
} from './stock';

/** The idempotency scope of a reservation. */
export const INVENTORY_RESERVE_SCOPE = 'inventory.reserve';
/** The idempotency scope of a release (the reservation's compensation). */
export const INVENTORY_RELEASE_SCOPE = 'inventory.release';

/** The inventory: its tables and routes. */
export const inventoryDefinition: ServiceDefinition = {
  name: 'inventory',
  migrate: migrateInventory,
  routes(router, runtime) {
    const { db } = runtime;
    router
      .on(
        'POST',
        '/v1/reservations',
        mutationHandler(runtime, { scope: INVENTORY_RESERVE_SCOPE, schema: ReserveBody, apply: applyReserve }),
      )
      .on(
        'POST',
        '/v1/releases',
        mutationHandler(runtime, { scope: INVENTORY_RELEASE_SCOPE, schema: ReleaseBody, apply: applyRelease }),
      )
      .on('GET', '/v1/stock/:tenant/:sku', ({ res, params }) => {
        const level = getStock(db, params['tenant'] ?? '', params['sku'] ?? '');
        if (level === undefined) throw new HttpError(404, DownstreamErrorCode.NotFound, 'no such SKU');
        sendJson(res, 200, level);
      });
  },
  adminRoutes(router, { db }) {
    router.on('POST', '/admin/stock', async ({ req, res }) => {
      const seed = await parseAdminBody(req, SeedStockBody);
      sendJson(res, 200, db.transaction(() => seedStock(db, seed))());
    });
  },
};

/** Starts the inventory service. */
export function createInventoryService(options: ServiceHostOptions): Promise<RunningService> {
  return startService(inventoryDefinition, options);
}
