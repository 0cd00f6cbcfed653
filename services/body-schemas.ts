/** Request-body helpers shared by the services: common zod pieces and admin-body parsing. */
import { z } from 'zod';
import { DownstreamErrorCode } from '../src/downstream/protocol';
import { HttpError, json, readJsonBody, type Handler, type RequestContext } from './http-kit';

/** A tenant or resource id: 1-128 characters. */
export const Id = z.string().min(1).max(128);

/** Reads the JSON body of an admin request and parses it with `schema`, or throws a 400 `Request.Invalid`. */
export async function parseAdminBody<T>(c: RequestContext, schema: z.ZodType<T>): Promise<T> {
  const parsed = schema.safeParse(await readJsonBody(c));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
    throw new HttpError(400, DownstreamErrorCode.BadRequest, 'admin body is invalid', { issues });
  }
  return parsed.data;
}

/**
 * The handler of an admin `POST` that takes a JSON body: parses it with `schema` (400 `Request.Invalid` when it
 * does not fit), then answers `status` with what `apply` returns for it.
 */
export function adminBodyRoute<T>(schema: z.ZodType<T>, apply: (body: T) => unknown, status = 200): Handler {
  return async (c) => json(status, apply(await parseAdminBody(c, schema)));
}
