/**
 * The inventory downstream service: reserves and releases stock under the idempotency contract of
 * `src/downstream/protocol.ts` (shared store, fences, lookup, stats and faults come with `startService`).
 *
 * Business routes: `POST /v1/reservations`, `POST /v1/releases` (by `reservationOperationKey`),
 * `GET /v1/stock/:tenant/:sku`. Admin listener: `POST /admin/stock` (seed the quantity on hand).
 */
import { adminBodyRoute } from '../body-schemas';
import { mutation } from '../idempotent-route';
import { readRoute } from '../read-route';
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
  mutations: {
    '/v1/reservations': mutation({ scope: INVENTORY_RESERVE_SCOPE, schema: ReserveBody, apply: applyReserve }),
    '/v1/releases': mutation({ scope: INVENTORY_RELEASE_SCOPE, schema: ReleaseBody, apply: applyRelease }),
  },
  reads: readRoute('/v1/stock/:tenant/:sku', getStock, 'no such SKU'),
  adminRoutes(router, { db }) {
    router.on(
      'POST',
      '/admin/stock',
      adminBodyRoute(SeedStockBody, (seed) => db.transaction(() => seedStock(db, seed))()),
    );
  },
};

/** Starts the inventory service. */
export function createInventoryService(options: ServiceHostOptions): Promise<RunningService> {
  return startService(inventoryDefinition, options);
}
