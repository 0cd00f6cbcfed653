// @ts-check
// The booking service as a process: `npm run service`, and `ledgerloop faults` starts one per case (the config's
// `services.booking.main`). It prints one JSON line with its URL when it listens.
const { runServiceMain, startService } = require('ledgerloop/services');
const { bookingService } = require('./booking-service');

runServiceMain('booking', (flags) => startService(bookingService, flags));
