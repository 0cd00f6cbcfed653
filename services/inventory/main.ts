/**
 * Process entry of the inventory service:
 *
 *   node -r tsx/cjs services/inventory/main.ts --db PATH [--port N] [--retention-ms N]
 *
 * Prints `{"service":"inventory","url":"http://127.0.0.1:PORT","pid":N}` once listening (see `runServiceMain`).
 */
import { runServiceMain } from '../service-main';
import { createInventoryService } from './inventory-service';

if (require.main === module) {
  runServiceMain('inventory', (flags) => createInventoryService(flags));
}
