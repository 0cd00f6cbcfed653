/** The admin listener's guards: the bearer token (constant-time, at least 32 characters) and loopback peers. */
import { bearerMatches, checkAdminToken, isLoopback } from '../../services/admin-listener';

const TOKEN = 'k'.repeat(43);

test('only the exact bearer token passes', () => {
  expect(bearerMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
  expect(bearerMatches(undefined, TOKEN)).toBe(false);
  expect(bearerMatches(TOKEN, TOKEN)).toBe(false); // no scheme
  expect(bearerMatches(`Bearer ${TOKEN}x`, TOKEN)).toBe(false);
  expect(bearerMatches(`Bearer ${TOKEN.slice(1)}`, TOKEN)).toBe(false);
  expect(bearerMatches('Bearer ', TOKEN)).toBe(false);
});

test('an admin token shorter than 32 characters is refused at start', () => {
  expect(() => checkAdminToken(undefined)).toThrow(/Service\.AdminTokenMissing/);
  expect(() => checkAdminToken('x'.repeat(31))).toThrow(/Service\.AdminTokenMissing/);
  expect(checkAdminToken('x'.repeat(32))).toBe('x'.repeat(32));
});

test.each([
  ['127.0.0.1', true],
  ['::1', true],
  ['::ffff:127.0.0.1', true],
  ['10.0.0.5', false],
  ['::ffff:192.0.2.1', false],
  ['fe80::1', false],
  [undefined, false],
])('peer %s is loopback: %s', (address, expected) => {
  expect(isLoopback(address)).toBe(expected);
});
