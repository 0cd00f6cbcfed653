import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  RateLimitError,
} from 'openai';
import { classifyProviderError, redact, retryAfterMs } from '../../src/planner/provider-errors';

const NOW = Date.parse('2026-01-01T00:00:00Z');

function http(status: number, headers: Record<string, string> = {}, message = 'provider says no'): APIError {
  return APIError.generate(status, { error: { message } }, undefined, new Headers(headers));
}

describe('provider error classification: one table decides what Temporal retries', () => {
  test.each<[string, unknown, boolean, string, number | undefined]>([
    ['429 without retry-after', http(429), true, 'rate_limited', undefined],
    ['429 with retry-after seconds', http(429, { 'retry-after': '2' }), true, 'rate_limited', 2_000],
    [
      '429 with retry-after-ms (preferred)',
      http(429, { 'retry-after-ms': '1500', 'retry-after': '9' }),
      true,
      'rate_limited',
      1_500,
    ],
    [
      '429 with retry-after as an HTTP date',
      http(429, { 'retry-after': new Date(NOW + 3_000).toUTCString() }),
      true,
      'rate_limited',
      3_000,
    ],
    ['408 request timeout', http(408), true, 'request_timeout', undefined],
    ['409 conflict', http(409), true, 'conflict', undefined],
    ['500 internal error', http(500), true, 'server_error', undefined],
    ['502 bad gateway', http(502), true, 'server_error', undefined],
    ['503 with retry-after', http(503, { 'retry-after': '1' }), true, 'server_error', 1_000],
    ['connection error', new APIConnectionError({ cause: new Error('ECONNREFUSED') }), true, 'connection', undefined],
    ['connection timeout', new APIConnectionTimeoutError(), true, 'connection_timeout', undefined],
    ['aborted by the activity cancellation signal', new APIUserAbortError(), true, 'aborted', undefined],
    ['an unrecognised error', new TypeError('boom'), true, 'unclassified', undefined],
    ['400 bad request', http(400), false, 'bad_request', undefined],
    ['401 unauthorized', http(401), false, 'unauthorized', undefined],
    ['403 forbidden', http(403), false, 'forbidden', undefined],
    ['404 not found', http(404), false, 'not_found', undefined],
    ['422 unprocessable', http(422), false, 'unprocessable', undefined],
    ['413 another client error', http(413), false, 'client_error', undefined],
    ['429 even with a bogus retry-after', http(429, { 'retry-after': 'soon' }), true, 'rate_limited', undefined],
  ])('%s -> retryable %s (%s), delay %s', (_name, err, retryable, reason, delay) => {
    const v = classifyProviderError(err, { nowMs: NOW });
    expect(v.retryable).toBe(retryable);
    expect(v.reason).toBe(reason);
    expect(v.retryable ? v.nextRetryDelayMs : undefined).toBe(delay);
  });

  test('the SDK subclasses classify by status like the generic APIError', () => {
    expect(http(429)).toBeInstanceOf(RateLimitError);
    expect(http(401)).toBeInstanceOf(AuthenticationError);
    expect(classifyProviderError(http(401))).toMatchObject({ retryable: false, status: 401 });
  });

  test('messages never carry the API key, a key-shaped string or a bearer token', () => {
    const err = http(401, {}, 'Incorrect API key provided: sk-proj-abcdef123456. Header was Bearer sk-live-xyz');
    const v = classifyProviderError(err, { secrets: ['my-secret-key-42'] });
    expect(v.message).not.toMatch(/abcdef123456|sk-live-xyz/);
    expect(v.message).toContain('401');
    const own = classifyProviderError(new Error('failed with my-secret-key-42 in it'), {
      secrets: ['my-secret-key-42'],
    });
    expect(own.message).not.toContain('my-secret-key-42');
  });

  test('a classifier never throws, whatever it is given', () => {
    for (const weird of [undefined, null, 42, 'text', { status: 'x' }, { status: 503 }]) {
      expect(() => classifyProviderError(weird)).not.toThrow();
    }
    expect(classifyProviderError({ status: 503 })).toMatchObject({ retryable: true, reason: 'server_error' });
  });
});

describe('retry-after parsing', () => {
  test.each<[string, Record<string, string>, number | undefined]>([
    ['absent', {}, undefined],
    ['seconds', { 'retry-after': '2' }, 2_000],
    ['fractional seconds', { 'retry-after': '0.5' }, 500],
    ['milliseconds header wins', { 'retry-after-ms': '250', 'retry-after': '2' }, 250],
    ['negative milliseconds fall back to seconds', { 'retry-after-ms': '-5', 'retry-after': '1' }, 1_000],
    ['a past HTTP date means now', { 'retry-after': new Date(NOW - 5_000).toUTCString() }, 0],
    ['garbage', { 'retry-after': 'later' }, undefined],
  ])('%s -> %s ms', (_name, headers, expected) => {
    expect(retryAfterMs(new Headers(headers), NOW)).toBe(expected);
  });

  test('plain header records are read case-insensitively', () => {
    expect(retryAfterMs({ 'Retry-After': '3' }, NOW)).toBe(3_000);
  });

  test('redaction caps very long provider text', () => {
    expect(redact('x'.repeat(5_000)).length).toBeLessThan(500);
  });
});
