// @ts-check
// The project's tools: booking a room, and its compensation. Pure declarations (they run in the workflow sandbox).
const { z } = require('zod');
const { defineTool, OperationKeyRef, onResource, receiptResult, shortKey } = require('ledgerloop/workflow-tools');

const Room = z.string().regex(/^[a-z0-9-]{1,32}$/, 'a room id like r-101');
const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a day like 2026-12-24');

const bookRoom = defineTool({
  name: 'book_room',
  version: 1,
  description: 'Book a meeting room for a day. Proposing the same booking again in this run is the same booking.',
  args: z.object({ room: Room, day: Day }).strict(),
  result: receiptResult({ bookingId: z.string(), room: z.string(), day: z.string() }),
  maxArgumentBytes: 1024,
  maxResultBytes: 4096,
  service: 'booking',
  route: '/v1/bookings',
  effectScope: 'booking.book',
  idempotency: 'idempotent_by_key',
  canonicalize: (args, ctx) => ({ tenant: ctx.tenant, room: args.room, day: args.day }),
  authorization: (args, ctx) => onResource('booking.book', ctx.tenant, 'room', args.room),
  compensation: {
    kind: 'compensate',
    tool: 'cancel_booking',
    args: (fwd) => ({ room: fwd.args.room, bookingOperationKey: fwd.operationKey }),
  },
  summary: (args) => `book_room ${args.room} on ${args.day}`,
  promote: (r) => ({ receipt: r.receipt, bookingId: r.bookingId, room: r.room, day: r.day }),
});

const cancelBooking = defineTool({
  name: 'cancel_booking',
  version: 1,
  description: 'Cancel a booking made in this run, named by the operation key that made it. A compensation.',
  args: z.object({ room: Room, bookingOperationKey: OperationKeyRef }).strict(),
  result: receiptResult({ bookingId: z.string() }),
  maxArgumentBytes: 1024,
  maxResultBytes: 4096,
  service: 'booking',
  route: '/v1/cancellations',
  effectScope: 'booking.cancel',
  idempotency: 'idempotent_by_key',
  canonicalize: (args, ctx) => ({ tenant: ctx.tenant, room: args.room, bookingOperationKey: args.bookingOperationKey }),
  authorization: (args, ctx) => onResource('booking.cancel', ctx.tenant, 'room', args.room),
  compensation: { kind: 'none' },
  forwardAbsentReasons: ['Booking.UnknownBooking'],
  summary: (args) => `cancel_booking ${args.room} ${shortKey(args.bookingOperationKey)}`,
  promote: (r) => ({ receipt: r.receipt, bookingId: r.bookingId }),
});

module.exports = { bookingTools: [bookRoom, cancelBooking] };
