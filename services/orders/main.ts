/**
 * Process entry of the orders service:
 *
 *   node -r tsx/cjs services/orders/main.ts --db PATH [--port N] [--retention-ms N]
 *
 * Prints `{"service":"orders","url":"http://127.0.0.1:PORT","pid":N}` once listening (see `runServiceMain`).
 * The outbox relay is a separate process on the same database: `relay-main.ts`.
 */
import { runServiceMain } from '../service-main';
import { createOrdersService } from './orders-service';

if (require.main === module) {
  runServiceMain('orders', (flags) => createOrdersService(flags));
}
