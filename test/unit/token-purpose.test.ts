/**
 * Tokens with a purpose: a token is accepted for exactly the act, run and call it names, within that act's short
 * lifetime, and its principal in normal form. Each refusal sits beside its control: the same token for the act it
 * names is accepted, so no refusal here comes from a wrong key or a broken issuer.
 */
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createIdentityActivities } from '../../activities/identity.activities';
import { staticIdentitySource } from '../../src/identity/config';
import { createDevIssuer, IssueError, type DevIssuer } from '../../src/identity/issue';
import type { TokenScope } from '../../src/identity/purpose';
import { verifyIdentityToken } from '../../src/identity/verify';
import { signRawToken } from '../helpers/raw-token';

let dev: DevIssuer;
beforeAll(async () => {
  dev = await createDevIssuer(path.join(mkdtempSync(path.join(os.tmpdir(), 'purpose-unit-')), 'issuer'));
});

const RUN_A = 'acme:run-a';
const RUN_B = 'acme:run-b';
const start = (run: string): TokenScope => ({ purpose: 'start', run });
const approve = (run: string, call: string): TokenScope => ({ purpose: 'approve', run, call });

/** `accepted as <principal>`, or the typed refusal. */
const outcome = (token: string, expected: TokenScope) =>
  verifyIdentityToken(staticIdentitySource([dev.config]), token, expected).then(
    (v) => `accepted as ${v.principalId}`,
    (e: { type?: string; message: string }) => `${e.type ?? 'error'}: ${e.message}`,
  );

type Mint = () => Promise<string>;
/** [name, the token, its control act (or [act, its own token]), the act attempted, why it is refused] */
const refusals: [string, Mint, TokenScope | [TokenScope, Mint], TokenScope, RegExp][] = [
  [
    "alice's start token replayed to start a second run",
    () => dev.issueFor(start(RUN_A), 'user:alice', 'acme'),
    start(RUN_A),
    start(RUN_B),
    /token is for start on run acme:run-a, not start on run acme:run-b/,
  ],
  [
    "carol's approval for one run presented on another run's call",
    () => dev.issueFor(approve(RUN_A, 'lc_1'), 'manager:carol', 'acme', ['approver']),
    approve(RUN_A, 'lc_1'),
    approve(RUN_B, 'lc_1'),
    /not approve on run acme:run-b/,
  ],
  [
    'an approval for one call presented on another call of the same run',
    () => dev.issueFor(approve(RUN_A, 'lc_1'), 'manager:carol', 'acme', ['approver']),
    approve(RUN_A, 'lc_1'),
    approve(RUN_A, 'lc_2'),
    /not approve on run acme:run-a call lc_2/,
  ],
  [
    'an approval token presented to resolve the call',
    () => dev.issueFor(approve(RUN_A, 'lc_1'), 'ops:bob', 'acme', ['operator', 'approver']),
    approve(RUN_A, 'lc_1'),
    { purpose: 'resolve', run: RUN_A, call: 'lc_1' },
    /token is for approve/,
  ],
  [
    "the run's own start token presented to cancel it",
    () => dev.issueFor(start(RUN_A), 'user:alice', 'acme'),
    start(RUN_A),
    { purpose: 'cancel', run: RUN_A },
    /not cancel on run acme:run-a/,
  ],
  [
    'an approval token valid for 10 minutes (approve: 5 at most)',
    () => dev.issueFor(approve(RUN_A, 'lc_1'), 'manager:carol', 'acme', ['approver'], { ttlSec: 600 }),
    // The control: a start token of the same lifetime is accepted (a start may live 15 minutes).
    [start(RUN_A), () => dev.issueFor(start(RUN_A), 'manager:carol', 'acme', [], { ttlSec: 600 })],
    approve(RUN_A, 'lc_1'),
    /a token to approve lives at most 300 s/,
  ],
];

test.each(refusals)('refused: %s (control: the act it names is accepted)', async (_n, mint, control, attack, why) => {
  const token = await mint();
  const [controlScope, controlToken] = Array.isArray(control) ? [control[0], await control[1]()] : [control, token];
  expect(await outcome(controlToken, controlScope)).toMatch(/^accepted as /);
  expect(await outcome(token, attack)).toMatch(/^Identity\.Invalid: /);
  expect(await outcome(token, attack)).toMatch(why);
});

test('a session token (the default of the development issuer) is accepted for no act', async () => {
  const session = await dev.issue('manager:carol', 'acme', ['approver'], { ttlSec: 12 * 3600 });
  for (const scope of [start(RUN_A), approve(RUN_A, 'lc_1'), { purpose: 'cancel', run: RUN_A } as const])
    expect(await outcome(session, scope)).toMatch(/Identity\.Invalid: the token names no act \(session\)/);
  // Control: the same person, key and issuer, minted for the act.
  expect(
    await outcome(await dev.issueFor(approve(RUN_A, 'lc_1'), 'manager:carol', 'acme'), approve(RUN_A, 'lc_1')),
  ).toBe('accepted as manager:carol');
});

test('an act token must name its run, and its call exactly when the act is on a call', async () => {
  const mint = (scope: object) => dev.issue('user:alice', 'acme', [], { scope: scope as TokenScope });
  await expect(mint({ purpose: 'approve', run: RUN_A })).rejects.toThrow(IssueError);
  await expect(mint({ purpose: 'start', run: RUN_A, call: 'lc_1' })).rejects.toThrow(/names no call/);
  await expect(mint({ purpose: 'cancel' })).rejects.toThrow(/names its run/);
  await expect(mint({ purpose: 'deploy', run: RUN_A })).rejects.toThrow(/purpose must be one of/);
  await expect(mint(start(RUN_A))).resolves.toMatch(/\./);
});

describe('principals are normalised where a token is minted and where it is verified', () => {
  test('the issuer writes the normal form; a principal that has none is not minted', async () => {
    const t = await dev.issueFor(start(RUN_A), 'User:Alice', 'acme', [], { subject: 'user:alice' });
    expect(await outcome(t, start(RUN_A))).toBe('accepted as user:alice');
    await expect(dev.issueFor(start(RUN_A), ' user:alice', 'acme', [], { subject: 'user:alice' })).rejects.toThrow(
      /U\+0020/,
    );
  });

  const raw = (principal: string, sub = 'user:alice') =>
    signRawToken(dev.options, { sub, principal, tenant: 'acme', purpose: 'start', run: RUN_A });
  test.each([
    ['User:alice', 'accepted as user:alice'],
    ['user:alice', 'accepted as user:alice'],
    [' user:alice', 'Identity.Unmapped'],
    ['user:alice ', 'Identity.Unmapped'],
    ['user:\u0430lice', 'Identity.Unmapped'],
    ['user:al\u200bice', 'Identity.Unmapped'],
  ])('a token an issuer signed with principal %j: %s', async (principal, expected) => {
    expect(await outcome(await raw(principal), start(RUN_A))).toContain(expected);
  });

  test('a subject with a zero-width character is refused; the same subject without it is accepted', async () => {
    expect(await outcome(await raw('user:bob', 'user:bob\u200b'), start(RUN_A))).toMatch(/Identity\.Invalid.*U\+200B/);
    expect(await outcome(await raw('user:bob', 'user:bob'), start(RUN_A))).toBe('accepted as user:bob');
  });
});

describe('the verifying activity binds the token to the run asked about', () => {
  const activity = () => createIdentityActivities({ issuers: staticIdentitySource([dev.config]) }).verifyIdentity;
  const inRun = (workflowId: string) =>
    new MockActivityEnvironment({
      workflowExecution: { workflowId, runId: 'temporal-run-1' },
    } as ConstructorParameters<typeof MockActivityEnvironment>[0]);
  const typeOf = (p: Promise<unknown>) =>
    p.then(
      () => 'accepted',
      (e: { type?: string }) => e.type ?? 'error',
    );

  test('an opening is a start of the asking run: another run is refused, its own accepted', async () => {
    const token = await dev.issueFor(start(RUN_A), 'user:alice', 'acme');
    expect(await typeOf(inRun(RUN_A).run(activity(), { token, includePolicy: true }))).toBe('accepted');
    expect(await typeOf(inRun(RUN_B).run(activity(), { token, includePolicy: true }))).toBe('Identity.Invalid');
  });

  test('the token must name the run the request names (an operator acting on another run); no purpose is refused', async () => {
    const token = await dev.issueFor(approve(RUN_A, 'lc_1'), 'manager:carol', 'acme', ['approver']);
    const ask = { token, purpose: 'approve' as const, callId: 'lc_1' };
    expect(await typeOf(inRun(RUN_A).run(activity(), { ...ask, runId: RUN_A }))).toBe('accepted');
    expect(await typeOf(inRun(RUN_A).run(activity(), { ...ask }))).toBe('accepted'); // the asking run
    expect(await typeOf(inRun(RUN_A).run(activity(), { ...ask, runId: RUN_B }))).toBe('Identity.Invalid');
    // The console's workflow asks about another run's call: the request names that run.
    expect(await typeOf(inRun('ledgerloop-lookup:x').run(activity(), { ...ask, runId: RUN_A }))).toBe('accepted');
    expect(await typeOf(inRun('ledgerloop-lookup:x').run(activity(), { ...ask }))).toBe('Identity.Invalid');
    expect(await typeOf(inRun(RUN_A).run(activity(), { token }))).toBe('Identity.Invalid');
  });
});
