/**
 * What a quota store wrote last, per tenant, kept live so that its next transaction need not parse it again.
 *
 * A tenant's row holds its whole windows state (up to 10,000 entries); parsing and checking it on every reservation
 * made a reservation cost O(state), about 3 ms of CPU at 1,000 entries on the bench box. The memo holds the text a
 * store wrote and the `QuotaWindows` that text was serialized from. It answers only when the row read under the
 * tenant's lock is that exact text, so a write by any other process, connection or hand is parsed and checked as
 * before (and refuses when it has another shape); an entry is handed out once, so a step that changes the windows
 * without writing them (pruning to read the usage) can never leave a memo that differs from its text.
 */
import type { QuotaWindows } from '../policy/quota-window';

/** How many tenants' last states one store keeps by default: each may hold up to about 1 MB (10,000 entries). */
export const QUOTA_MEMO_TENANTS = 16;

export class QuotaMemo {
  private readonly last = new Map<string, { readonly text: string; readonly windows: QuotaWindows }>();

  /** `tenants`: the most tenants kept (the least recently written go first); default QUOTA_MEMO_TENANTS. */
  constructor(private readonly tenants: number = QUOTA_MEMO_TENANTS) {}

  /** The windows `stored` was serialized from, if this store wrote exactly that text last; removed either way. */
  take(tenant: string, stored: string): QuotaWindows | undefined {
    const m = this.last.get(tenant);
    if (m === undefined) return undefined;
    this.last.delete(tenant);
    return m.text === stored ? m.windows : undefined;
  }

  /** Keep `windows` as the state serialized to `text`; it must not change afterwards (the store drops it). */
  keep(tenant: string, text: string, windows: QuotaWindows): void {
    this.last.delete(tenant);
    this.last.set(tenant, { text, windows });
    if (this.last.size > this.tenants) this.last.delete(this.last.keys().next().value as string);
  }
}
