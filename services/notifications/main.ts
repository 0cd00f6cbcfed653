/**
 * Process entry of the notifications service:
 *
 *   node -r tsx/cjs services/notifications/main.ts --db PATH [--port N] [--retention-ms N]
 *
 * Prints `{"service":"notifications","url":"http://127.0.0.1:PORT","pid":N}` once listening.
 */
import { runServiceMain } from '../service-main';
import { createNotificationsService } from './notifications-service';

if (require.main === module) {
  runServiceMain('notifications', (flags) => createNotificationsService(flags));
}
