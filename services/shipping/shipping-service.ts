/**
 * The shipping downstream service: schedules and cancels shipments under the idempotency contract of
 * `src/downstream/protocol.ts` (shared store, fences, lookup, stats and faults come with `startService`).
 *
 * Business routes: `POST /v1/shipments`, `POST /v1/cancellations` (by `shipmentOperationKey`),
 * `GET /v1/shipments/:tenant/:orderId`. Admin listener: `POST|GET /admin/capacity`, `POST /admin/dispatch`.
 */
import { adminBodyRoute } from '../body-schemas';
import { json } from '../http-kit';
import { mutation } from '../idempotent-route';
import { readRoute } from '../read-route';
import { startService, type RunningService, type ServiceDefinition, type ServiceHostOptions } from '../service-host';
import {
  applyCancel,
  applySchedule,
  CancelBody,
  CapacityBody,
  DispatchBody,
  dispatchShipment,
  getCapacity,
  listShipments,
  migrateShipping,
  ScheduleBody,
  setCapacity,
} from './shipments';

/** The idempotency scope of scheduling a shipment. */
export const SHIPPING_SCHEDULE_SCOPE = 'shipping.schedule';
/** The idempotency scope of a cancellation (the shipment's compensation). */
export const SHIPPING_CANCEL_SCOPE = 'shipping.cancel';

/** The shipping service: its tables and routes. */
export const shippingDefinition: ServiceDefinition = {
  name: 'shipping',
  migrate: migrateShipping,
  mutations: {
    '/v1/shipments': mutation({ scope: SHIPPING_SCHEDULE_SCOPE, schema: ScheduleBody, apply: applySchedule }),
    '/v1/cancellations': mutation({ scope: SHIPPING_CANCEL_SCOPE, schema: CancelBody, apply: applyCancel }),
  },
  reads: readRoute(
    '/v1/shipments/:tenant/:orderId',
    (db, tenant, orderId) => ({ tenant, orderId, shipments: listShipments(db, tenant, orderId) }),
    'no such order',
  ),
  adminRoutes(router, { db }) {
    router
      .on('GET', '/admin/capacity', () => json(200, getCapacity(db)))
      .on(
        'POST',
        '/admin/capacity',
        adminBodyRoute(CapacityBody, (body) => setCapacity(db, body)),
      )
      .on(
        'POST',
        '/admin/dispatch',
        adminBodyRoute(DispatchBody, (body) => db.transaction(() => dispatchShipment(db, body))()),
      );
  },
};

/** Starts the shipping service. */
export function createShippingService(options: ServiceHostOptions): Promise<RunningService> {
  return startService(shippingDefinition, options);
}
