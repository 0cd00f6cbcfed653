/**
 * The console's checks without a server: the Origin rule for state-changing requests, constant-time secrets,
 * sessions that end with their token, one-time sign-in codes, the refusal each Temporal error is shown as, and
 * what each role is offered. Every refusal has a positive control beside it.
 */
import { WorkflowUpdateFailedError, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, RetryState, WorkflowNotFoundError } from '@temporalio/common';
import { allowedOf } from '../../console/config';
import { originProblem } from '../../console/guard';
import { refusalOf } from '../../console/refusal';
import { abilitiesOf, mayList, offeredActions, ttlChoicesMs } from '../../console/roles';
import { sameSecret, Sessions, SignInCodes } from '../../console/session';
import { DEFAULT_POLICY } from '../../src/domain/policy-format';
import type { VerifiedIdentity } from '../../src/domain/verified-identity';

const allowed = allowedOf(8090).origins;

test.each([
  ['another origin', { origin: 'http://attacker.invalid' }, /not this console/],
  ['no origin', {}, /must name its Origin/],
  ['an opaque origin', { origin: 'null' }, /must name its Origin/],
  [
    'a cross-site fetch from the right origin',
    { origin: 'http://127.0.0.1:8090', secFetchSite: 'cross-site' },
    /cross-site/,
  ],
  ['a same-site sibling', { origin: 'http://127.0.0.1:8090', secFetchSite: 'same-site' }, /same-site/],
  ['another port', { origin: 'http://127.0.0.1:8091' }, /not this console/],
])('a state-changing request with %s is refused', (_what, headers, why) => {
  expect(originProblem(headers, allowed)).toMatch(why);
});

test.each([
  [{ origin: 'http://127.0.0.1:8090' }],
  [{ origin: 'http://localhost:8090', secFetchSite: 'same-origin' }],
  [{ origin: 'HTTP://LOCALHOST:8090' }],
])('positive control: the console’s own origin passes (%o)', (headers) => {
  expect(originProblem(headers, allowed)).toBeUndefined();
});

test('configured origins replace the loopback defaults, and name the Hosts served', () => {
  const a = allowedOf(8090, ['https://console.example.com']);
  expect([...a.origins]).toEqual(['https://console.example.com']);
  expect([...a.hosts]).toEqual(['console.example.com']);
  expect([...allowedOf(8090).hosts]).toEqual(['127.0.0.1:8090', 'localhost:8090']);
});

test('secrets compare equal only when identical', () => {
  expect(sameSecret('abc', 'abc')).toBe(true);
  expect(sameSecret('abc', 'abd')).toBe(false);
  expect(sameSecret('abc', 'ab')).toBe(false);
  expect(sameSecret('', '')).toBe(false);
  expect(sameSecret(undefined, 'abc')).toBe(false);
});

const person = (over: Partial<VerifiedIdentity> = {}): VerifiedIdentity => ({
  subject: 'manager:carol',
  issuer: 'i',
  principalId: 'manager:carol',
  tenant: 'acme',
  roles: ['approver'],
  tokenDigest: 'd',
  expiresAt: new Date(Date.now() + 60_000).toISOString(),
  ...over,
});

test('a session ends when its token expires; before that it is found by its id only', () => {
  let now = Date.now();
  const sessions = new Sessions(() => now);
  const s = sessions.create(person(), 'tok');
  expect(sessions.get(s.id)).toBe(s);
  expect(sessions.get(`${s.id}x`)).toBeUndefined();
  expect(s.csrf).not.toBe(s.id);
  now += 61_000;
  expect(sessions.get(s.id)).toBeUndefined();
});

test('a sign-in code works once and not after it lapses', () => {
  let now = 0;
  const codes = new SignInCodes(() => now);
  const a = codes.issue('token-a', 1_000);
  expect(codes.take(a)).toBe('token-a');
  expect(codes.take(a)).toBeUndefined();
  const b = codes.issue('token-b', 1_000);
  now = 1_001;
  expect(codes.take(b)).toBeUndefined();
  expect(codes.take(undefined)).toBeUndefined();
});

test.each([
  [
    'an update the run refused',
    new WorkflowUpdateFailedError('failed', ApplicationFailure.create({ type: 'Actor.Forbidden', message: 'no' })),
    { status: 422, type: 'Actor.Forbidden', message: 'no' },
  ],
  [
    'a console action workflow that failed typed',
    new WorkflowFailedError(
      'failed',
      ApplicationFailure.create({ type: 'Console.EvidenceMismatch', message: 'x' }),
      RetryState.NON_RETRYABLE_FAILURE,
    ),
    { status: 422, type: 'Console.EvidenceMismatch' },
  ],
  [
    'a run that does not exist',
    new WorkflowNotFoundError('nope', 'w', undefined),
    { status: 404, type: 'Run.NotFound' },
  ],
  [
    'a closed run',
    Object.assign(new Error('workflow execution already completed'), {
      code: 5,
      details: 'workflow execution already completed',
      metadata: {},
    }),
    { status: 409, type: 'Run.Closed' },
  ],
  [
    'a frontend that refuses the caller',
    Object.assign(new Error('denied'), { code: 7, details: 'Request unauthorized.', metadata: {} }),
    { status: 403, type: 'Temporal.PermissionDenied' },
  ],
  ['anything else', new Error('boom'), { status: 500, type: 'Console.Error', message: 'boom' }],
])('%s is shown as its typed refusal', (_what, err, expected) => {
  expect(refusalOf(err)).toMatchObject(expected);
});

test('roles: a viewer sees all and is offered nothing; an approver approves; an operator operates; others see their own', () => {
  const viewer = abilitiesOf(person({ roles: ['viewer'] }), DEFAULT_POLICY, ['viewer']);
  const approver = abilitiesOf(person(), DEFAULT_POLICY, ['viewer']);
  const operator = abilitiesOf(person({ roles: ['operator'] }), DEFAULT_POLICY, ['viewer']);
  const plain = abilitiesOf(person({ roles: [] }), DEFAULT_POLICY, ['viewer']);
  const me = { principalId: 'user:alice' };
  expect(mayList('approval', 'user:bob', me, viewer) && mayList('unknown', 'user:bob', me, viewer)).toBe(true);
  expect([
    offeredActions('approval', viewer),
    offeredActions('unknown', viewer),
    offeredActions('abandoned', viewer),
  ]).toEqual([[], [], []]);
  expect(offeredActions('approval', approver)).toEqual(['approve', 'deny']);
  expect(mayList('unknown', 'user:bob', me, approver)).toBe(false);
  expect(offeredActions('unknown', operator)).toEqual(['resolve', 'lookup']);
  expect(mayList('approval', 'user:bob', me, operator)).toBe(false);
  expect(mayList('approval', 'user:bob', me, plain)).toBe(false);
  expect(mayList('approval', 'user:alice', me, plain)).toBe(true);
  // Fail closed: no readable policy, nothing offered.
  expect(abilitiesOf(person(), undefined, ['viewer'])).toMatchObject({ approve: false, operate: false, cancel: false });
});

test('approval TTLs offered never exceed the policy’s cap and include its default', () => {
  expect(ttlChoicesMs(DEFAULT_POLICY)).toEqual([300_000, 600_000, 1_800_000, 3_600_000]);
  expect(ttlChoicesMs({ ...DEFAULT_POLICY, maxApprovalTtlMs: 900_000, approvalTtlMs: 700_000 })).toEqual([
    300_000, 600_000, 700_000,
  ]);
  expect(ttlChoicesMs(undefined)).toEqual([]);
});
