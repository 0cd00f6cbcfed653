/** The inbox page: the items, sortable oldest or newest first; the script keeps them live through /api/inbox/stream. */
import type { Inbox, SortOrder } from '../inbox';
import { itemCard } from './items';
import { html, raw, str, type Html } from './layout';

export function inboxItemsHtml(
  inbox: Inbox,
  nowMs: number,
  ttls: readonly number[],
  defaultTtl?: number,
): { key: string; html: string }[] {
  return inbox.items.map((i) => ({ key: i.key, html: String(itemCard(i, nowMs, ttls, defaultTtl)) }));
}

export function inboxPage(
  inbox: Inbox,
  order: SortOrder,
  nowMs: number,
  ttls: readonly number[],
  defaultTtl?: number,
): Html {
  const count = inbox.items.length;
  return str(
    html`<section class="inbox" data-sort="${order}">
      <div class="bar">
        <h1>Inbox <span class="count" data-testid="count">${count}</span></h1>
        <form method="get" action="/" class="sort">
          <label
            >Sort
            <select name="sort" data-testid="sort">
              <option value="oldest" ${order === 'oldest' ? 'selected' : ''}>oldest first</option>
              <option value="newest" ${order === 'newest' ? 'selected' : ''}>newest first</option>
            </select>
          </label>
          <noscript><button type="submit">Sort</button></noscript>
        </form>
        <span class="live" data-testid="live">live</span>
      </div>
      <ul class="problems">
        ${inbox.problems.map((p) => html`<li>${p}</li>`)}
      </ul>
      <div id="items" data-testid="items">
        ${inboxItemsHtml(inbox, nowMs, ttls, defaultTtl).map((i) => html`<div class="slot" data-key="${i.key}">${raw(i.html)}</div>`)}
      </div>
      <p class="empty" ${count ? 'hidden' : ''}>Nothing waits for you.</p>
    </section>`,
  );
}
