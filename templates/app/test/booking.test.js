// @ts-check
// The project on a real Temporal server (a dev server of its own), its service and a worker: the governed path
// end to end. Run with `npm test`.
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { after, before, test } = require('node:test');
const { startLocalStack } = require('../scripts/local-stack');

/** @type {Awaited<ReturnType<typeof startLocalStack>>} */
let stack;
before(async () => {
  stack = await startLocalStack('test');
});
after(async () => {
  await stack?.stop();
});

/**
 * @param {string} room
 * @param {string[]} extra
 * @returns {Promise<{ workflowId: string, result: any }>}
 */
async function book(room, extra = []) {
  const args = ['start', '--scenario', 'book-room', '--var', `room=${room}`, '--var', 'day=2026-12-24'];
  const run = await stack.cli([...args, ...extra, '--wait', '--json']);
  assert.equal(run.code, 0, run.err);
  return JSON.parse(run.out);
}

let booked = '';

test('a booking by a user is made once, and the run completes', async () => {
  const { workflowId, result } = await book('r-101');
  booked = workflowId;
  assert.equal(result.stopReason, 'completed');
  assert.deepEqual(
    result.calls.map((/** @type {any} */ c) => [c.toolName, c.state]),
    [['book_room', 'SUCCEEDED']],
  );
  // The ledger as `ledgerloop show` reads it: the service's answer matched the tool's result schema (the model saw
  // the booking, not an error), and the run's invariants hold.
  const shown = await stack.cli(['show', workflowId, '--json']);
  assert.equal(shown.code, 0, shown.err);
  const ledger = JSON.parse(shown.out);
  assert.deepEqual(
    ledger.calls.map((/** @type {any} */ c) => [c.toolName, c.state, c.errorCode]),
    [['book_room', 'SUCCEEDED', null]],
  );
  assert.deepEqual(ledger.violations, []);
  assert.deepEqual(
    stack.bookings().filter((b) => b.room === 'r-101'),
    [{ room: 'r-101', day: '2026-12-24', status: 'booked' }],
  );
});

test('a principal the policy does not name is refused before anything is sent', async () => {
  // The same scenario as above (which the policy allows): only the principal differs.
  const { result } = await book('r-202', ['--principal', 'service:nightly']);
  assert.deepEqual(
    result.calls.map((/** @type {any} */ c) => [c.toolName, c.state]),
    [['book_room', 'FAILED']],
  );
  assert.deepEqual(
    stack.bookings().filter((b) => b.room === 'r-202'),
    [],
  );
});

test('the run’s history replays against this project’s tools', async () => {
  assert.ok(booked, 'the first test made a run');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'booking-history-')), 'book-room.json');
  const exported = await stack.cli(['export', booked, '--out', file]);
  assert.equal(exported.code, 0, exported.err);
  const replayed = await stack.cli(['replay', file]);
  assert.equal(replayed.code, 0, `${replayed.out}\n${replayed.err}`);
});
