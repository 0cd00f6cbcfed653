// @ts-check
// The booking service on ledgerloop/services: its table and two idempotent effects; the kit brings the rest.
const { createHash } = require('node:crypto');
const { z } = require('zod');
const { BusinessRejection, ForwardOperationKey, Id, mutation, refuseMissingForward } = require('ledgerloop/services');

const BookBody = z.strictObject({ tenant: Id, room: Id, day: z.string() });
const CancelBody = z.strictObject({ tenant: Id, room: Id, bookingOperationKey: ForwardOperationKey });

/** @param {import('ledgerloop/services').Database} db */
function migrate(db) {
  db.exec(`CREATE TABLE IF NOT EXISTS bookings (
    tenant TEXT NOT NULL, booking_id TEXT NOT NULL, room TEXT NOT NULL, day TEXT NOT NULL,
    status TEXT NOT NULL, book_key TEXT NOT NULL,
    PRIMARY KEY (tenant, booking_id), UNIQUE (tenant, book_key))`);
}

/**
 * @param {import('ledgerloop/services').Database} db
 * @param {import('zod').infer<typeof BookBody>} body
 * @param {string} key the operation key the request carries
 */
function book(db, body, key) {
  const bookingId = `bkg_${createHash('sha256').update(`${body.tenant}\n${key}`).digest('hex').slice(0, 16)}`;
  db.prepare(`INSERT INTO bookings VALUES (?, ?, ?, ?, 'booked', ?)`).run(
    body.tenant,
    bookingId,
    body.room,
    body.day,
    key,
  );
  const receipt = `rcpt_${bookingId}`;
  return { receipt, result: { receipt, tenant: body.tenant, bookingId, room: body.room, day: body.day } };
}

/**
 * @param {import('ledgerloop/services').Database} db
 * @param {import('zod').infer<typeof CancelBody>} body
 */
function cancel(db, body) {
  const row = /** @type {{ tenant: string, booking_id: string, status: string } | undefined} */ (
    db.prepare('SELECT * FROM bookings WHERE tenant = ? AND book_key = ?').get(body.tenant, body.bookingOperationKey)
  );
  if (row === undefined)
    return refuseMissingForward(db, body.tenant, body.bookingOperationKey, 'Booking.UnknownBooking', 'booking');
  if (row.status === 'cancelled') throw new BusinessRejection('Booking.AlreadyCancelled', 'cancelled already');
  db.prepare(`UPDATE bookings SET status = 'cancelled' WHERE tenant = ? AND booking_id = ?`).run(
    row.tenant,
    row.booking_id,
  );
  const receipt = `rcpt_cancel_${row.booking_id}`;
  return { receipt, result: { receipt, tenant: row.tenant, bookingId: row.booking_id } };
}

exports.bookingService = {
  name: 'booking',
  migrate,
  mutations: {
    '/v1/bookings': mutation({ scope: 'booking.book', schema: BookBody, apply: book }),
    '/v1/cancellations': mutation({ scope: 'booking.cancel', schema: CancelBody, apply: cancel }),
  },
};
