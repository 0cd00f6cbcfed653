/** Money is integer minor units plus an ISO 4217 currency code: never a float, never implicit. */
import { z } from 'zod';

export const Currency = z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as EUR');
export const Money = z
  .object({
    minor: z.number().int().safe(),
    currency: Currency,
  })
  .strict();
export type Money = z.infer<typeof Money>;

export const PositiveMoney = Money.refine((m) => m.minor > 0, { message: 'amount must be positive' });

export function formatMoney(m: Money): string {
  const sign = m.minor < 0 ? '-' : '';
  const abs = Math.abs(m.minor);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')} ${m.currency}`;
}
