/**
 * The ticketing service as a process:
 *
 *   LEDGERLOOP_CAPABILITY_KEYS=.data/keys/jwks.json node -r tsx/cjs src/service/main.ts --db .data/ticketing.db --port 4300
 *
 * Prints `{"service":"ticketing","url":...,"pid":N}` once listening; stops on SIGTERM/SIGINT.
 */
import { runServiceMain } from 'ledgerloop/services';
import { startTicketingService } from './ticketing-service';

if (require.main === module) {
  runServiceMain('ticketing', (flags) => startTicketingService(flags));
}
