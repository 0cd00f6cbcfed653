/**
 * Process entry of the shipping service:
 *
 *   node -r tsx/cjs services/shipping/main.ts --db PATH [--port N] [--retention-ms N]
 *
 * Prints `{"service":"shipping","url":"http://127.0.0.1:PORT","pid":N}` once listening (see `runServiceMain`).
 */
import { runServiceMain } from '../service-main';
import { createShippingService } from './shipping-service';

if (require.main === module) {
  runServiceMain('shipping', (flags) => createShippingService(flags));
}
