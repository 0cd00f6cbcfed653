import { classifyHttpResponse, classifyTransportError } from '../../src/downstream/client';

/** An error shaped like undici's: `TypeError('fetch failed')` whose `cause` carries the code. */
function fetchFailed(cause: Error & { code?: string }): TypeError {
  return new TypeError('fetch failed', { cause });
}

function withCode(message: string, code: string, name = 'Error'): Error & { code: string } {
  const err = Object.assign(new Error(message), { code });
  err.name = name;
  return err;
}

function domException(name: string): Error {
  const err = new Error(`The operation was aborted (${name})`);
  err.name = name;
  return err;
}

describe('classifyTransportError', () => {
  const table: [string, unknown, 'unavailable' | 'response_lost'][] = [
    [
      'connection refused: never reached the service',
      fetchFailed(withCode('connect ECONNREFUSED', 'ECONNREFUSED')),
      'unavailable',
    ],
    ['DNS name not found', fetchFailed(withCode('getaddrinfo ENOTFOUND wallet', 'ENOTFOUND')), 'unavailable'],
    ['DNS temporary failure', fetchFailed(withCode('getaddrinfo EAI_AGAIN wallet', 'EAI_AGAIN')), 'unavailable'],
    ['host unreachable', fetchFailed(withCode('connect EHOSTUNREACH', 'EHOSTUNREACH')), 'unavailable'],
    [
      'undici connect timeout',
      fetchFailed(withCode('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT')),
      'unavailable',
    ],
    ['connection reset after connect', fetchFailed(withCode('read ECONNRESET', 'ECONNRESET')), 'response_lost'],
    ['broken pipe while sending', fetchFailed(withCode('write EPIPE', 'EPIPE')), 'response_lost'],
    [
      'undici socket closed by the other side',
      fetchFailed(withCode('other side closed', 'UND_ERR_SOCKET', 'SocketError')),
      'response_lost',
    ],
    ['"other side closed" without a code', fetchFailed(new Error('other side closed')), 'response_lost'],
    ['socket hang up', new Error('socket hang up'), 'response_lost'],
    ['headers timeout', fetchFailed(withCode('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT')), 'response_lost'],
    ['body timeout', fetchFailed(withCode('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT')), 'response_lost'],
    ['caller abort after sending', domException('AbortError'), 'response_lost'],
    ['client timeout (AbortSignal.timeout)', domException('TimeoutError'), 'response_lost'],
    ['TCP timeout', fetchFailed(withCode('connect ETIMEDOUT', 'ETIMEDOUT')), 'response_lost'],
    ['unknown error: conservatively ambiguous', new Error('something odd'), 'response_lost'],
    ['a thrown non-error value', 'boom', 'response_lost'],
    [
      'refused nested two causes deep',
      new Error('outer', { cause: fetchFailed(withCode('x', 'ECONNREFUSED')) }),
      'unavailable',
    ],
  ];

  it.each(table)('%s -> %s', (_title, err, expected) => {
    const outcome = classifyTransportError(err);
    expect(outcome.kind).toBe(expected);
    expect(outcome.reason.length).toBeGreaterThan(0);
  });

  it('puts the error code in the reason', () => {
    expect(classifyTransportError(fetchFailed(withCode('connect ECONNREFUSED', 'ECONNREFUSED'))).reason).toContain(
      'ECONNREFUSED',
    );
  });
});

describe('classifyHttpResponse', () => {
  const err = (error: string, extra: Record<string, unknown> = {}) => ({
    error,
    message: 'm',
    committed: false,
    ...extra,
  });
  const table: [string, number, unknown, boolean, Record<string, unknown>][] = [
    ['201 is ok', 201, { receipt: 'r' }, false, { kind: 'ok', status: 201, replayed: false }],
    ['201 replayed is ok and replayed', 201, { receipt: 'r' }, true, { kind: 'ok', replayed: true }],
    ['2xx without a readable body is ambiguous', 200, undefined, false, { kind: 'response_lost' }],
    ['409 in progress', 409, err('Idempotency.InProgress'), false, { kind: 'in_progress' }],
    [
      '409 arguments mismatch',
      409,
      err('Idempotency.ArgumentsMismatch'),
      false,
      { kind: 'rejected', code: 'Idempotency.ArgumentsMismatch' },
    ],
    ['409 key sealed', 409, err('Idempotency.KeySealed'), false, { kind: 'rejected', code: 'Idempotency.KeySealed' }],
    ['409 stale fence', 409, err('Fence.Stale'), false, { kind: 'rejected', code: 'Fence.Stale' }],
    ['400 invalid hash', 400, err('Request.ArgumentsHashInvalid'), false, { kind: 'rejected', status: 400 }],
    [
      '422 business rejection carries its reason',
      422,
      err('Downstream.Rejected', { reason: 'Wallet.InsufficientFunds' }),
      true,
      { kind: 'rejected', status: 422, code: 'Downstream.Rejected', reason: 'Wallet.InsufficientFunds' },
    ],
    ['404 without a JSON body', 404, undefined, false, { kind: 'rejected', code: 'HTTP 404' }],
    ['429 is not applied', 429, undefined, false, { kind: 'unavailable' }],
    ['503 committed:false is not applied', 503, err('Downstream.Unavailable'), false, { kind: 'unavailable' }],
    ['500 committed:false is not applied', 500, err('Service.Internal'), false, { kind: 'unavailable' }],
    [
      '500 without a commitment is ambiguous',
      500,
      { error: 'Service.Internal', message: 'x' },
      false,
      { kind: 'response_lost' },
    ],
    ['502 is ambiguous', 502, { error: 'Downstream.BadGateway', message: 'x' }, false, { kind: 'response_lost' }],
    [
      '502 even with committed:false is ambiguous (a proxy may say anything)',
      502,
      err('X'),
      false,
      { kind: 'response_lost' },
    ],
    ['504 is ambiguous', 504, undefined, false, { kind: 'response_lost' }],
    ['503 without a body is ambiguous', 503, undefined, false, { kind: 'response_lost' }],
    ['3xx is ambiguous', 307, undefined, false, { kind: 'response_lost' }],
  ];

  it.each(table)('%s', (_title, status, body, replayed, expected) => {
    expect(classifyHttpResponse(status, body, replayed)).toMatchObject(expected);
  });
});
