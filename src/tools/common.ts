/** Pieces shared by the tool declarations: pure, inside the workflow determinism boundary. */
import { z } from 'zod';

/** A forward operation key as the workflow derives it (`deriveOperationKey`): names the effect to compensate. */
export const OperationKeyRef = z.string().regex(/^op_[0-9a-f]{40}$/, 'an operation key op_<40 hex>');

/** An order id like `ord_1001`. */
export const OrderId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'an order id like ord_1001');

/** NFC-normalized, trimmed text with inner whitespace runs collapsed to one space. */
export function normalizeText(text: string): string {
  return text.normalize('NFC').trim().replace(/\s+/g, ' ');
}

/** The first characters of an operation key, for one-line summaries. */
export function shortKey(key: string): string {
  return key.slice(0, 14);
}

/** A downstream's answer to an effect: its receipt and tenant, and the fields the tool names; more fields pass. */
export function receiptResult<S extends z.ZodRawShape>(fields: S) {
  return z.object({ receipt: z.string().min(1).max(128), tenant: z.string(), ...fields }).passthrough();
}

/** An action on one resource of the caller's tenant (`<tenant>/<kind>/<id>`): what a tool's authorization names. */
export function onResource(action: string, tenant: string, kind: string, id: string) {
  return { action, resource: `${tenant}/${kind}/${id}`, resourceTenant: tenant };
}
