/**
 * The admin listener of a team's own service on PostgreSQL, so `ledgerloop faults` reads and arms it as it does
 * every kit service (a separate app: serve it on 127.0.0.1 only, apart from the service's public port):
 *
 *   const faults = lab ? new FaultInjector() : undefined;
 *   app.post('/orders', operationMiddleware(ops, { ...caller, scope: 'orders.record', faults }), handler);
 *   serve({ fetch: labAdminApp({ token, faults, stats }).fetch, port: adminPort, hostname: '127.0.0.1' });
 *
 * `GET /admin/stats` answers the service's counts (`dispatchCount`, `businessEffectCount`: the fault protocol's
 * metrics, read from the service's own tables); with a fault injector (a lab start, and only then) `POST
 * /admin/faults` arms a rule (`FaultRuleSchema`), `GET` lists what fired, `DELETE` disarms every rule. Every
 * request needs the admin token as `Authorization: Bearer …`; anything else is 401.
 */
import { Hono } from 'hono';
import { DownstreamErrorCode } from '../../src/downstream/protocol';
import { bearerMatches, checkAdminToken } from '../admin-listener';
import { FaultRuleSchema, type FaultInjector } from '../faults';
import { errorJson, json } from '../http-kit';

/** What the service counts in its own storage, under the kit's names. */
export interface LabStats {
  /** Mutating requests admitted (e.g. the key rows of `ledgerloop_operations`). */
  readonly dispatchCount: number;
  /** Effects committed (e.g. the rows of the team's own table). */
  readonly businessEffectCount: number;
}

export interface LabAdminOptions {
  /** The admin token (`LEDGERLOOP_ADMIN_TOKEN`, at least 32 characters); a weaker one refuses to build the app. */
  readonly token: string | undefined;
  /** The injector the routes' `operationMiddleware` was given. Default none: no fault routes are served. */
  readonly faults?: FaultInjector;
  /** Counts the service's effects, from its own storage (read on every `GET /admin/stats`). */
  readonly stats: () => Promise<LabStats>;
}

/** The admin app; see the module comment. Throws `ServiceConfigError` for a missing or short token. */
export function labAdminApp(opts: LabAdminOptions): Hono {
  const token = checkAdminToken(opts.token);
  const admin = new Hono();
  admin.use('*', async (c, next) => {
    if (!bearerMatches(c.req.header('authorization'), token))
      return errorJson(401, DownstreamErrorCode.AdminUnauthorized, 'the admin token is required');
    await next();
  });
  admin.get('/admin/stats', async () => json(200, await opts.stats()));
  const { faults } = opts;
  if (faults === undefined) return admin;
  admin.post('/admin/faults', async (c) => {
    const parsed = FaultRuleSchema.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success)
      return errorJson(400, DownstreamErrorCode.BadRequest, `invalid fault rule: ${parsed.error.message}`);
    return json(201, { id: faults.arm(parsed.data) });
  });
  admin.get('/admin/faults', () => json(200, { rules: faults.states() }));
  admin.delete('/admin/faults', () => {
    faults.clear();
    return json(200, { cleared: true });
  });
  return admin;
}
