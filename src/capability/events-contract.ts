/**
 * The contract between the orders outbox relay (publisher) and the notifications service (consumer) of
 * `OrderFulfilled` events: the route, the idempotency scope of a delivery (its key is the event id), and the
 * reason a consumer gives for an event it consumed before.
 */

/** The consumer route events are published to. */
export const EVENTS_ROUTE = '/v1/events';

/** The idempotency scope of consuming an event. */
export const EVENTS_SCOPE = 'notifications.event';

/** The consumer's reason for an event it already consumed (its idempotency record was pruned since). */
export const DUPLICATE_EVENT_REASON = 'Notifications.DuplicateEvent';

/** The principal a relay's delivery capability names. */
export const RELAY_PRINCIPAL = 'service:orders-relay';
