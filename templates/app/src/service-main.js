// The booking service as a process (the config's `services.booking.main`; `ledgerloop faults` starts it per case).
const { runServiceMain, startService } = require('ledgerloop/services');
const { bookingService } = require('./booking-service');

runServiceMain('booking', (flags) => startService(bookingService, flags));
