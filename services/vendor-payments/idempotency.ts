/**
 * A payment provider's idempotency layer, after Stripe's documented behaviour (docs.stripe.com/api/idempotent_requests):
 *
 * - the status and body of the first request under a key are saved once the endpoint began executing, and a retry
 *   under the key gets them back (`Idempotent-Replayed: true`), a 500 included;
 * - a request that fails validation before executing saves nothing (a retry executes);
 * - the same key with other parameters is refused: 400, `error.type` `idempotency_error`;
 * - the same key while its first request still executes: 409, `error.code` `idempotency_key_in_use`;
 * - keys are pruned once older than the retention (Stripe: at least 24 h); a reused key after that is a new request.
 *
 * It takes no fence and cannot seal a key: a lookup that finds nothing proves nothing by itself. Fault injection
 * (armed on the admin listener) acts at the two moments of a request: before the commit and after it.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import type { VendorStore } from './store';
import type { VendorFaults } from './faults';

export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** A Stripe-shaped error body. */
export function stripeError(status: number, type: string, code: string, message: string): Answer {
  return { status, body: { error: { type, code, message } } };
}

/** Thrown by a handler for a refusal before execution (validation, a missing resource): nothing is saved. */
export class Refusal extends Error {
  constructor(readonly answer: Answer) {
    super(JSON.stringify(answer.body));
  }
}

function paramsHash(path: string, params: unknown): string {
  return createHash('sha256').update(path).update('\n').update(JSON.stringify(params)).digest('hex');
}

type VendorContext = Context<{ Bindings: HttpBindings }>;

function respond(c: VendorContext, a: Answer, replayed = false): Response {
  return c.json(a.body as object, a.status as 200, replayed ? { 'Idempotent-Replayed': 'true' } : {});
}

/** The connection is cut before any response: the caller cannot tell whether anything was done. */
function dropped(c: VendorContext): Response {
  c.env.incoming.socket.destroy();
  return new Response(null, { status: 500 });
}

export interface IdempotentRequest {
  readonly path: string;
  readonly params: unknown;
  /** Validation before execution: throws `Refusal` (nothing saved). */
  check(): void;
  /** The effect and its answer, run inside the transaction that saves the answer under the key. */
  execute(): Answer;
}

export async function idempotent(
  c: VendorContext,
  store: VendorStore,
  faults: VendorFaults,
  retentionMs: number,
  req: IdempotentRequest,
): Promise<Response> {
  store.prune(retentionMs);
  store.bump('requests');
  const key = c.req.header('idempotency-key');
  const hash = paramsHash(req.path, req.params);
  if (key !== undefined) {
    if (key.length === 0 || key.length > 255)
      return respond(
        c,
        stripeError(400, 'invalid_request_error', 'idempotency_key_invalid', 'keys are 1 to 255 characters'),
      );
    const earlier = store.key(key);
    if (earlier !== undefined) {
      if (earlier.paramsHash !== hash)
        return respond(
          c,
          stripeError(
            400,
            'idempotency_error',
            'idempotency_key_reused',
            'Keys for idempotent requests can only be used with the same parameters they were first used with.',
          ),
        );
      if (earlier.status === 'in_progress')
        return respond(
          c,
          stripeError(
            409,
            'idempotency_error',
            'idempotency_key_in_use',
            'A request with this key is still being processed.',
          ),
        );
      store.bump('replays');
      return respond(
        c,
        { status: earlier.responseStatus ?? 500, body: JSON.parse(earlier.responseBody ?? 'null') },
        true,
      );
    }
  }
  try {
    req.check();
  } catch (err) {
    if (err instanceof Refusal) return respond(c, err.answer);
    throw err;
  }
  if (key !== undefined) store.beginKey(key, req.path, hash);
  const before = await faults.at('before_commit', req.path);
  if (before === 'drop_response') {
    if (key !== undefined) store.releaseKey(key);
    return dropped(c);
  }
  let answer: Answer =
    before === 'error_5xx'
      ? stripeError(500, 'api_error', 'internal', 'An error occurred with our API.')
      : { status: 0, body: null };
  store.db.transaction(() => {
    if (before !== 'error_5xx') answer = req.execute();
    if (key !== undefined) store.saveResponse(key, answer.status, answer.body);
  })();
  const after = await faults.at('after_commit', req.path);
  if (after === 'drop_response') return dropped(c);
  if (after === 'error_5xx') {
    // The endpoint failed after its effect committed: the 500 is what the key saves, and every retry gets it.
    answer = stripeError(500, 'api_error', 'internal', 'An error occurred with our API.');
    if (key !== undefined) store.saveResponse(key, answer.status, answer.body);
  }
  return respond(c, answer);
}
