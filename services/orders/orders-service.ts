/**
 * The orders downstream service: marks orders fulfilled under the idempotency contract of
 * `src/downstream/protocol.ts`, writing the `OrderFulfilled` message into its transactional outbox in the same
 * transaction. Publishing is the relay's job (`relay-main.ts`, a separate process on the same database).
 *
 * Business routes: `POST /v1/fulfilments`, `GET /v1/orders/:tenant/:orderId` (with a read capability; on the admin
 * listener as `GET /admin/v1/orders/:tenant/:orderId`). Admin listener: `POST /admin/orders`
 * (seed), `GET /admin/outbox` (outbox and relay evidence), `POST /admin/fulfilment-faults` (one-shot fault
 * inside the next fulfilment transaction, between the order write and the outbox write).
 */
import { z } from 'zod';
import { adminBodyRoute } from '../body-schemas';
import { json } from '../http-kit';
import { mutationHandler } from '../idempotent-route';
import { readRoute } from '../read-route';
import { startService, type RunningService, type ServiceDefinition, type ServiceHostOptions } from '../service-host';
import { applyFulfilment, FulfilBody, getOrder, migrateOrders, SeedOrderBody, seedOrder } from './orders';
import { outboxStats } from './outbox';

/** The idempotency scope of a fulfilment. */
export const ORDERS_FULFIL_SCOPE = 'orders.fulfil';

/**
 * Body of `POST /admin/fulfilment-faults`: `crash` SIGKILLs the process inside the transaction (nothing of it
 * commits); `throw` fails the apply with an unexpected error (the transaction rolls back, 500).
 */
export const FulfilmentFaultBody = z.strictObject({ do: z.enum(['crash', 'throw']) });
export type FulfilmentFaultBody = z.infer<typeof FulfilmentFaultBody>;

/** The orders service: its tables and routes. */
export const ordersDefinition: ServiceDefinition = {
  name: 'orders',
  migrate: migrateOrders,
  routes(router, runtime) {
    const betweenWrites = (): void => {
      const fault = armedFulfilmentFault;
      armedFulfilmentFault = undefined;
      if (fault === 'crash') process.kill(process.pid, 'SIGKILL');
      if (fault === 'throw') throw new Error('injected failure between the order write and the outbox write');
    };
    router.on(
      'POST',
      '/v1/fulfilments',
      mutationHandler(runtime, {
        scope: ORDERS_FULFIL_SCOPE,
        schema: FulfilBody,
        apply: (d, body, key, request) => applyFulfilment(d, body, key, request, { betweenWrites }),
      }),
    );
  },
  // A read of one tenant's order: with a read capability, or on the admin listener (services/read-capability.ts).
  reads: readRoute('/v1/orders/:tenant/:orderId', getOrder, 'no such order'),
  adminRoutes(router, { db, faults }) {
    router
      .on(
        'POST',
        '/admin/orders',
        adminBodyRoute(SeedOrderBody, (seed) => seedOrder(db, seed)),
      )
      .on('GET', '/admin/outbox', () => json(200, outboxStats(db)));
    if (faults === undefined) return; // a fault route exists only in a lab start
    router.on(
      'POST',
      '/admin/fulfilment-faults',
      adminBodyRoute(
        FulfilmentFaultBody,
        (body) => {
          armedFulfilmentFault = body.do;
          return { armed: armedFulfilmentFault };
        },
        201,
      ),
    );
  },
};

/** The one-shot fulfilment fault armed in this process (lab starts only: its route exists nowhere else). */
let armedFulfilmentFault: FulfilmentFaultBody['do'] | undefined;

/** Starts the orders service. */
export function createOrdersService(options: ServiceHostOptions): Promise<RunningService> {
  return startService(ordersDefinition, options);
}
