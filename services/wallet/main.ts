/**
 * Process entry of the wallet service:
 *
 *   node -r tsx/cjs services/wallet/main.ts --db PATH [--port N] [--retention-ms N]
 *
 * Prints `{"service":"wallet","url":"http://127.0.0.1:PORT","pid":N}` once listening (see `runServiceMain`).
 */
import { runServiceMain } from '../service-main';
import { createWalletService } from './wallet-service';

if (require.main === module) {
  runServiceMain('wallet', (flags) => createWalletService(flags));
}
