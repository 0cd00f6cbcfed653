/**
 * The `ledgerloop` run commands as real processes (`node bin/ledgerloop.cjs ...`) against the real dev server
 * (TEMPORAL_ADDRESS) and a worker built like production's (createLedgerloopWorker): start, show, list, export,
 * replay, approve, deny, resolve, audit and cancel, and bad input that ends in one line and exit code 2.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { Worker } from '@temporalio/worker';
import { readLedger } from '../../host/client/runs';
import type { Stack } from '../../lab/stack';
import { generateCodecKeys } from '../../src/codec/data-converter';
import { REDUCER_VERSION } from '../../src/domain/reducer';
import type { AgentRunResult } from '../../src/domain/run';
import { getFreePort } from '../../host/server/dev-server';
import { spawnedClient, spawnService } from '../../services/spawn';
import { createLedgerloopWorker } from '../../host/worker/worker';
import { pendingApprovalsQuery, type PendingApproval } from '../../workflows/definitions';
import { historyHoldsAToken } from '../helpers/history-token';
import { startTestStack, taskQueue } from '../helpers/stack';
import { labScriptedModel } from '../../lab/scenarios';

jest.setTimeout(180_000);

const REPO = path.resolve(__dirname, '..', '..');
const BIN = path.join(REPO, 'bin', 'ledgerloop.cjs');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-cli-'));

let stack: Stack;
const workers: Array<{ worker: Worker; running: Promise<void> }> = [];
const tq = taskQueue('cli');

interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/**
 * Runs the CLI as a child process; `server` adds --address and --namespace; `env` overrides its environment. The
 * tokens are session tokens: the CLI mints the token for each act with the issuer's key (LEDGERLOOP_DEV_ISSUER_KEY).
 */
function cli(
  args: readonly string[],
  opts: { server?: boolean; env?: Record<string, string | undefined> } = {},
): Promise<CliRun> {
  const conn = opts.server === false ? [] : ['--address', stack.server.address, '--namespace', stack.server.namespace];
  // The run principal's token for `start` comes from the environment (LEDGERLOOP_IDENTITY_TOKEN); actors pass --token.
  const child = spawn(process.execPath, [BIN, ...args, ...conn], {
    cwd: REPO,
    env: {
      ...process.env,
      NO_COLOR: '1',
      LEDGERLOOP_IDENTITY_TOKEN: tokens['user:alice']!,
      LEDGERLOOP_DEV_ISSUER_KEY: stack.identity.keyPath,
      ...opts.env,
    },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

const json = <T>(r: CliRun): T => JSON.parse(r.out) as T;

async function poll<T>(probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function runWorker(queue: string, wallet: string): Promise<void> {
  const { worker } = await createLedgerloopWorker({
    models: [labScriptedModel()],
    address: stack.server.address,
    namespace: stack.server.namespace,
    taskQueue: queue,
    services: { wallet },
    workflowBundlePath: stack.bundlePath,
    capabilityKey: stack.capabilityKey,
    identity: `cli-test-worker@${process.pid}`,
    ...(stack.dataConverter ? { dataConverter: stack.dataConverter } : {}),
    ...(stack.tracing ? { tracing: stack.tracing } : {}),
  });
  workers.push({ worker, running: worker.run() });
}

const debitVars = ['--var', 'account=acct_1', '--var', 'amount.minor=1250', '--var', 'amount.currency=EUR'];
const twoDebits = [
  '--scenario',
  'two-debits',
  '--var',
  'account=acct_1',
  '--var',
  'amount={"minor":1000,"currency":"EUR"}',
  '--var',
  'amount2={"minor":60000,"currency":"EUR"}',
];

async function startTwoDebits(): Promise<{ id: string; handle: WorkflowHandle; pending: PendingApproval }> {
  const r = await cli(['start', ...twoDebits, '--task-queue', tq]);
  expect(r.code).toBe(0);
  const id = r.out.trim();
  const handle = stack.client.workflow.getHandle(id);
  const pending = await poll(async () => (await handle.query(pendingApprovalsQuery))[0]);
  return { id, handle, pending };
}

/** Tokens of the stack's development issuer: the run principal, an approver, an operator. */
const tokens: Record<string, string> = {};

/** The codec keys of this file's stack: its client, its worker and the CLI encrypt payloads (tokens included). */
const codecKeys = generateCodecKeys('cli');
const codecBefore = process.env.LEDGERLOOP_CODEC_KEYS;

beforeAll(async () => {
  process.env.LEDGERLOOP_CODEC_KEYS = codecKeys.keys;
  stack = await startTestStack('cli');
  // Workers built by createLedgerloopWorker read the issuers from the environment, as a deployed worker does.
  process.env.LEDGERLOOP_IDENTITY_ISSUERS = stack.identity.configPath;
  tokens['user:alice'] = await stack.identity.issue('user:alice', 'acme');
  tokens['manager:carol'] = await stack.identity.issue('manager:carol', 'acme', ['approver']);
  tokens['ops:bob'] = await stack.identity.issue('ops:bob', 'acme', ['operator']);
  await stack.walletClient.seedAccount({
    tenant: 'acme',
    account: 'acct_1',
    balanceMinor: 10_000_000,
    currency: 'EUR',
  });
  await runWorker(tq, stack.wallet.url);
});

afterAll(async () => {
  for (const w of workers) w.worker.shutdown();
  await Promise.all(workers.map((w) => w.running.catch(() => undefined)));
  await stack?.stop();
  if (codecBefore === undefined) delete process.env.LEDGERLOOP_CODEC_KEYS;
  else process.env.LEDGERLOOP_CODEC_KEYS = codecBefore;
});

describe('a scripted debit from start to audit', () => {
  let id = '';
  let result: AgentRunResult;

  test('start --wait --json runs it and prints the id and the result', async () => {
    const r = await cli([
      'start',
      '--scenario',
      'wallet-debit',
      ...debitVars,
      '--task-queue',
      tq,
      '--deadline',
      '60s',
      '--wait',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const out = json<{ workflowId: string; runId: string; result: AgentRunResult }>(r);
    ({ workflowId: id, result } = out);
    expect(id).toMatch(/^acme:run-/);
    expect(result.stopReason).toBe('completed');
    expect(result.calls).toEqual([
      expect.objectContaining({ toolName: 'wallet_debit', state: 'SUCCEEDED', receipt: expect.any(String) }),
    ]);
    expect(r.err).toContain(`waiting for ${id}`); // plain progress lines: stderr is not a terminal here
  });

  test('show prints one line per ledger event, the calls and the projection hash', async () => {
    const j = await cli(['show', id, '--json']);
    expect(j.code).toBe(0);
    const shown = json<{
      projectionHash: string;
      reducerVersion: number;
      events: Array<{ type: string }>;
      calls: Array<{ state: string }>;
      pendingApprovals: unknown[];
    }>(j);
    expect(shown.projectionHash).toBe(result.projectionHash);
    expect(shown.reducerVersion).toBe(REDUCER_VERSION);
    expect(shown.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['RunCreated', 'DispatchIntentRecorded', 'ToolResultRecorded', 'RunCompleted']),
    );
    expect(shown.pendingApprovals).toEqual([]);

    const t = await cli(['show', id]);
    expect(t.code).toBe(0);
    expect(t.out).toContain(`projection hash ${result.projectionHash}`);
    expect(t.out).toContain(`reducer v${REDUCER_VERSION}`);
    expect(t.out.split('\n').filter((l) => /^ {2}#\d+ /.test(l))).toHaveLength(shown.events.length);
    expect(t.out).toMatch(/lc_1_\w+\s+wallet_debit\s+SUCCEEDED/);
  });

  test('list finds it by its search attributes', async () => {
    const rows = await poll(async () => {
      const r = await cli([
        'list',
        '--principal',
        'user:alice',
        '--tenant',
        'acme',
        '--status',
        'stopped',
        '--stop-reason',
        'completed',
        '--limit',
        '1000',
        '--json',
      ]);
      const found = json<Array<{ workflowId: string }>>(r);
      return found.some((x) => x.workflowId === id) ? found : undefined;
    });
    expect(rows.find((x) => x.workflowId === id)).toMatchObject({
      execution: 'COMPLETED',
      status: 'stopped',
      principal: 'user:alice',
      tenant: 'acme',
      unknownCalls: 0,
    });
    const table = await cli(['list', '--tenant', 'acme', '--limit', '1000']);
    expect(table.out).toMatch(/^WORKFLOW ID\s+EXECUTION\s+STATUS/);
    expect(table.out).toContain(id);
  });

  test('audit passes: every field is named and the history agrees', async () => {
    const r = await cli(['audit', id]);
    expect(r.code).toBe(0);
    for (const label of [
      'principal',
      'tenant',
      'policy version',
      'worker identity',
      'operation key',
      'arguments hash',
      'receipt',
      'fence',
    ]) {
      expect(r.out).toMatch(new RegExp(`✓ ${label}`));
    }
    expect(r.out).toContain('PASS');
    const j = json<{
      ok: boolean;
      calls: Array<{ checks: Array<{ status: string; field: string; ledger?: string }> }>;
    }>(await cli(['audit', id, '--json']));
    expect(j.ok).toBe(true);
    expect(j.calls[0]!.checks.find((c) => c.field === 'workerIdentity')?.ledger).toBe(`cli-test-worker@${process.pid}`);
  });

  test('export writes a fixture that replay replays; a changed workflow and a broken file fail it', async () => {
    const dir = path.join(tmp, 'fixtures');
    const file = path.join(dir, 'debit.json');
    const r = await cli(['export', id, '--out', file]);
    expect(r.code).toBe(0);
    const events = historyFromJSON(JSON.parse(readFileSync(file, 'utf8'))).events ?? [];
    expect(r.err).toContain(`wrote ${events.length} events of ${id}`);

    const ok = await cli(['replay', dir], { server: false });
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/✓ .*debit\.json {2}\(\d+ events/);
    expect(ok.out).toContain('1 replayed, 0 failed');

    writeFileSync(path.join(dir, 'broken.json'), '{"events": [');
    const changed = await cli(['replay', '--workflows', 'test/replay/changed-workflow/index.ts', dir], {
      server: false,
    });
    expect(changed.code).toBe(1);
    expect(changed.out).toMatch(/✗ .*broken\.json {2}SyntaxError: not a history JSON file/);
    expect(changed.out).toMatch(/✗ .*debit\.json {2}DeterminismViolationError: /);
    expect(changed.out).toContain('0 replayed, 2 failed');
  });
});

describe('human decisions from the command line', () => {
  test('approve shows the hash and policy, refuses a decision naming other arguments, then approves', async () => {
    const { id, handle, pending } = await startTwoDebits();
    const wrong = await cli([
      'approve',
      id,
      pending.logicalCallId,
      '--token',
      tokens['manager:carol']!,
      '--arguments-hash',
      '0'.repeat(64),
    ]);
    expect(wrong.code).toBe(1);
    expect(wrong.out).toContain(`arguments hash  ${pending.argumentsHash}`);
    expect(wrong.out).toContain(`policy version  ${pending.policyVersion}`);
    expect(wrong.err.trim()).toBe(
      'ledgerloop approve: refused: the decision names other arguments than the pending call',
    );

    const unknown = await cli(['approve', id, 'lc_9_nope', '--token', tokens['manager:carol']!]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain(
      `call lc_9_nope is not waiting for approval in ${id} (waiting: ${pending.logicalCallId})`,
    );

    // The validator of resolveCall refuses to settle a call that is not UNKNOWN (here: the first, settled debit).
    const first = Object.values((await readLedger(handle)).projection.calls).find((c) => c.state === 'SUCCEEDED')!;
    const settled = await cli([
      'resolve',
      id,
      first.logicalCallId,
      '--outcome',
      'FAILED',
      '--token',
      tokens['ops:bob']!,
      '--reason',
      'r',
    ]);
    expect(settled.code).toBe(1);
    expect(settled.err.trim()).toBe(`ledgerloop resolve: refused: call ${first.logicalCallId} is not UNKNOWN`);

    const ok = await cli([
      'approve',
      id,
      pending.logicalCallId,
      '--token',
      tokens['manager:carol']!,
      '--ttl',
      '10m',
      '--json',
    ]);
    expect(ok.code).toBe(0);
    expect(json<{ outcome: { accepted: boolean; expiresAt: string } }>(ok).outcome).toMatchObject({
      accepted: true,
      expiresAt: expect.any(String),
    });
    const result = (await handle.result()) as AgentRunResult;
    expect(result.calls[1]).toMatchObject({ logicalCallId: pending.logicalCallId, state: 'SUCCEEDED' });
    const ledger = await readLedger(handle);
    expect(ledger.events.find((e) => e.type === 'ApprovalGranted')).toMatchObject({
      approver: 'manager:carol',
      argumentsHash: pending.argumentsHash,
    });
  });

  test('deny needs a reason, and the denial becomes the call’s result', async () => {
    const { id, handle, pending } = await startTwoDebits();
    const noReason = await cli(['deny', id, pending.logicalCallId, '--token', tokens['manager:carol']!]);
    expect(noReason.code).toBe(2);
    expect(noReason.err.trim().split('\n')).toHaveLength(1);
    const r = await cli([
      'deny',
      id,
      pending.logicalCallId,
      '--token',
      tokens['manager:carol']!,
      '--reason',
      'too large',
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`denied ${pending.logicalCallId} as manager:carol: too large`);
    const result = (await handle.result()) as AgentRunResult;
    expect(result.calls[1]).toMatchObject({ state: 'FAILED' });
    const ledger = await readLedger(handle);
    expect(ledger.events.find((e) => e.type === 'ApprovalDenied')).toMatchObject({
      approver: 'manager:carol',
      reason: 'too large',
    });
  });

  test('cancel records the request and says what it does not prove', async () => {
    const { id, handle } = await startTwoDebits();
    const noToken = await cli(['cancel', id, '--reason', 'changed my mind']);
    expect(noToken.code).toBe(2);
    const r = await cli(['cancel', id, '--reason', 'changed my mind', '--token', tokens['user:alice']!]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`cancellation requested for ${id}`);
    expect(r.out).toContain('does not undo effects in flight');
    await handle.result().catch(() => undefined);
    // The verified requester and the reason are in the ledger (Temporal's own cancel would carry neither).
    const requested = (await readLedger(handle)).events.find((e) => e.type === 'CancellationRequested');
    expect(requested).toMatchObject({ requestedBy: { principalId: 'user:alice' }, reason: 'changed my mind' });
    const again = await cli(['cancel', id, '--token', tokens['user:alice']!]);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/is already \w+; nothing to cancel/);
  });
});

describe('tokens with a purpose at the command line', () => {
  test('a session token is refused before anything is sent unless the CLI can mint; an exact token needs no minting', async () => {
    const { id, handle, pending } = await startTwoDebits();
    const noKey = { LEDGERLOOP_DEV_ISSUER_KEY: '' };
    const session = await cli(['approve', id, pending.logicalCallId, '--token', tokens['manager:carol']!], {
      env: noKey,
    });
    expect(session.code).toBe(2);
    expect(session.err).toMatch(/--token: the token names no act \(session\), not approve on run .* call lc_/);
    // Carol's approval of another call (here: of the run's first, settled call) is not this call's token.
    const first = Object.keys((await readLedger(handle)).projection.calls).find((c) => c !== pending.logicalCallId)!;
    const other = await stack.identity.issueFor({ purpose: 'approve', run: id, call: first }, 'manager:carol', 'acme', [
      'approver',
    ]);
    const elsewhere = await cli(['approve', id, pending.logicalCallId, '--token', other], { env: noKey });
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.err).toContain(`the token is for approve on run ${id} call ${first}`);
    expect((await handle.query(pendingApprovalsQuery)).map((p) => p.logicalCallId)).toEqual([pending.logicalCallId]);
    // Control: a token for exactly this call, minted elsewhere, is sent as it is and approves.
    const exact = await stack.identity.issueFor(
      { purpose: 'approve', run: id, call: pending.logicalCallId },
      'manager:carol',
      'acme',
      ['approver'],
    );
    const ok = await cli(['approve', id, pending.logicalCallId, '--token', exact], { env: noKey });
    expect(ok).toMatchObject({ code: 0, err: '' });
    expect((await handle.result()).stopReason).toBe('completed');
  });

  test('a token leaves encrypted with the codec keys; without any key it is refused unless --allow-token-in-clear', async () => {
    const sealed = await startTwoDebits();
    const approve = (r: typeof sealed, env?: Record<string, string>) =>
      cli(['approve', r.id, r.pending.logicalCallId, '--token', tokens['manager:carol']!], env ? { env } : {});
    expect(await approve(sealed)).toMatchObject({ code: 0, err: '' });
    await sealed.handle.result();
    expect(await historyHoldsAToken(sealed.handle)).toBe(false);

    // A client with no key to be found (none configured, no demo key in its data folder): refused, nothing started.
    const idle = taskQueue('cli-clear');
    const noKeys = { LEDGERLOOP_CODEC_KEYS: '', LEDGERLOOP_DATA_DIR: path.join(tmp, 'no-demo-key') };
    const startIdle = ['start', '--scenario', 'wallet-debit', ...debitVars, '--task-queue', idle];
    const refused = await cli([...startIdle, '--workflow-id', `acme:cli-refused-${idle}`], { env: noKeys });
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/in clear text.*--allow-token-in-clear sends it anyway\), nothing sent/);
    await expect(stack.client.workflow.getHandle(`acme:cli-refused-${idle}`).describe()).rejects.toThrow();
    // Told so explicitly: warned, and the start token is in the history in clear (the check above can fail).
    const clear = await cli([...startIdle, '--allow-token-in-clear'], { env: noKeys });
    expect(clear.code).toBe(0);
    expect(clear.err).toMatch(/^warning: your identity token would be written to the run's history in clear text/);
    const clearRun = stack.client.workflow.getHandle(clear.out.trim());
    expect(await historyHoldsAToken(clearRun)).toBe(true);
    await clearRun.terminate('cli test: nothing polls this queue');

    // Strict mode without keys refuses before anything is sent.
    const strict = await approve(sealed, { ...noKeys, LEDGERLOOP_CODEC_STRICT: '1' });
    expect(strict.code).toBe(2);
    expect(strict.err).toMatch(/LEDGERLOOP_CODEC_STRICT=1 needs keys/);
  });
});

describe('an outcome only an operator can settle', () => {
  test('list --unknown finds the run, resolve records who and why, audit reports the fence nobody reported', async () => {
    // A wallet of its own that commits, then hangs, then dies: nobody can say what happened.
    const wallet = await spawnService('wallet', {
      dbPath: path.join(tmp, 'doomed.db'),
      env: { ...stack.capabilityTrust.serviceEnv },
    });
    let back: Awaited<ReturnType<typeof spawnService>> | undefined;
    try {
      const client = spawnedClient(wallet, { capabilityKey: stack.capabilityKey });
      await client.seedAccount({ tenant: 'acme', account: 'acct_1', balanceMinor: 10_000, currency: 'EUR' });
      await client.armFault({ at: 'after_commit', do: 'delay', ms: 60_000, path: '/v1/debits' });
      const tq2 = taskQueue('cli-doomed');
      await runWorker(tq2, wallet.url);
      const runFile = path.join(tmp, 'run.json');
      writeFileSync(
        runFile,
        JSON.stringify({
          strategy: 'check_receipt',
          caps: { toolAttemptMs: 1_500, reconcileAttemptMs: 1_000 },
          limits: { tool: 2, reconcile: 2 },
        }),
      );
      const started = await cli([
        'start',
        '--input',
        runFile,
        '--scenario',
        'wallet-debit',
        ...debitVars,
        '--task-queue',
        tq2,
        '--deadline',
        '90s',
      ]);
      expect(started.code).toBe(0);
      const id = started.out.trim();
      const handle = stack.client.workflow.getHandle(id);
      const key = await poll(async () => {
        const e = (await readLedger(handle)).events.find((x) => x.type === 'DispatchIntentRecorded');
        return e?.type === 'DispatchIntentRecorded' ? e.intent.operationKey : undefined;
      });
      await poll(async () => ((await client.stats(key)).businessEffectCount === 1 ? true : undefined));
      await wallet.stop();
      const snap = await poll(async () => {
        const s = await readLedger(handle);
        return s.projection.status === 'waiting_for_operator' ? s : undefined;
      }, 60_000);
      const lc = Object.keys(snap.projection.calls)[0]!;

      await poll(async () => {
        const r = await cli(['list', '--unknown', '--status', 'waiting_for_operator', '--limit', '1000', '--json']);
        return json<Array<{ workflowId: string; unknownCalls: number }>>(r).some(
          (x) => x.workflowId === id && x.unknownCalls === 1,
        )
          ? true
          : undefined;
      });

      const resolve = (outcome: string, reason: string, receipt?: string) =>
        cli([
          'resolve',
          id,
          lc,
          '--outcome',
          outcome,
          '--token',
          tokens['ops:bob']!,
          '--reason',
          reason,
          ...(receipt ? ['--receipt', receipt] : []),
        ]);
      // The wallet cannot be asked: the statement is not taken on trust, nothing is recorded.
      const down = await resolve('SUCCEEDED', 'wallet statement shows the debit', 'stmt-42');
      expect(down.code).toBe(1);
      expect(down.err).toContain('ledgerloop resolve: refused (Operator.LookupUnreachable): wallet did not answer');
      // Back on the same port and database: FAILED is refused while the wallet holds the debit, with its receipt.
      back = await spawnService('wallet', {
        dbPath: path.join(tmp, 'doomed.db'),
        port: Number(new URL(wallet.url).port),
        env: { ...stack.capabilityTrust.serviceEnv },
      });
      const found = await client.lookup(key, { tenant: 'acme' });
      const receipt = found.kind === 'found' ? found.record.receipt! : 'none';
      const no = await resolve('FAILED', 'customer says no charge');
      expect(no.code).toBe(1);
      expect(no.err).toContain(
        'ledgerloop resolve: refused (Operator.ResolutionRefused): FAILED refused: wallet under key',
      );
      expect(no.err).toContain(`receipt ${receipt}`);
      const r = await resolve('SUCCEEDED', 'wallet statement shows the debit', receipt);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`call ${lc} (wallet_debit) is UNKNOWN`);
      expect(r.out).toContain(`resolved ${lc} as SUCCEEDED by ops:bob`);
      expect(r.out).toContain(`evidence: wallet lookup of ${key} at `);
      expect(r.out).toContain(`found completed with receipt ${receipt}`);
      const result = (await handle.result()) as AgentRunResult;
      expect(result.stopReason).toBe('completed');
      const ledger = await readLedger(handle);
      const settled = ledger.events.find((e) => e.type === 'ToolEffectReconciled');
      expect(settled).toMatchObject({
        via: 'operator',
        outcome: 'SUCCEEDED',
        receipt,
        detail: 'ops:bob: wallet statement shows the debit',
      });

      const closed = await cli([
        'resolve',
        id,
        lc,
        '--outcome',
        'FAILED',
        '--token',
        tokens['ops:bob']!,
        '--reason',
        'second thoughts',
      ]);
      expect(closed.code).toBe(1);
      expect(closed.err.trim()).toBe(
        `ledgerloop resolve: run ${id} has already closed (workflow execution already completed)`,
      );

      const audit = await cli(['audit', id, '--json']);
      expect(audit.code).toBe(1);
      const report = json<{
        ok: boolean;
        calls: Array<{ checks: Array<{ field: string; status: string; ledger?: string; note?: string }> }>;
      }>(audit);
      const checks = Object.fromEntries(report.calls[0]!.checks.map((c) => [c.field, c]));
      expect(checks.receipt).toMatchObject({ status: 'ok', ledger: receipt });
      expect(checks.principal).toMatchObject({ status: 'ok', ledger: 'user:alice' });
      expect(checks.fence).toMatchObject({ status: 'missing', note: expect.stringContaining('settled via operator') });
      const text = await cli(['audit', id]);
      expect(text.code).toBe(1);
      expect(text.out).toMatch(/✗ fence +— +\(no dispatch attempt reported a fence/);
      expect(text.out).toContain('FAIL: 1 field(s) missing or mismatched');

      // With the run's worker gone, nobody can answer the ledger query: the command says so and names the queue.
      const [gone] = workers.splice(1, 1);
      gone!.worker.shutdown();
      await gone!.running;
      const noWorker = await cli(['show', id, '--timeout', '2s']);
      expect(noWorker.code).toBe(1);
      expect(noWorker.err).toContain(`ledgerloop show: no worker answered the ledger query for ${id} within 2 s`);
      expect(noWorker.err).toContain(`task queue ${tq2}`);
    } finally {
      await wallet.stop();
      await back?.stop();
    }
  });
});

describe('no worker on the queue', () => {
  const idle = taskQueue('cli-nobody');

  test('start --wait warns within seconds that no worker polls the queue, naming it', async () => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        'start',
        '--scenario',
        'wallet-debit',
        ...debitVars,
        '--task-queue',
        idle,
        '--wait',
        '--address',
        stack.server.address,
        '--namespace',
        stack.server.namespace,
      ],
      {
        cwd: REPO,
        env: {
          ...process.env,
          NO_COLOR: '1',
          LEDGERLOOP_IDENTITY_TOKEN: tokens['user:alice']!,
          LEDGERLOOP_DEV_ISSUER_KEY: stack.identity.keyPath,
        },
      },
    );
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const warned = await poll(
      async () => (err.includes(`no worker is polling task queue ${idle}`) ? true : undefined),
      20_000,
    ).finally(() => child.kill('SIGTERM'));
    expect(warned).toBe(true);
    expect(err).toContain('npm start');
  });

  test('show on a run nobody polls names the queue that needs a worker and how to start one', async () => {
    const started = await cli(['start', '--scenario', 'wallet-debit', ...debitVars, '--task-queue', idle]);
    expect(started).toMatchObject({ code: 0, err: '' });
    const r = await cli(['show', started.out.trim(), '--timeout', '5s']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`task queue ${idle}`);
    expect(r.err).toContain('npm start');
    expect(r.err).not.toMatch(/gRPC status|FAILED_PRECONDITION/);
  });
});

describe('bad input and an unreachable server', () => {
  test('an unknown run id, malformed JSON and a missing flag exit 2 with one line', async () => {
    const unknown = await cli(['show', 'no-such-run-anywhere']);
    expect(unknown).toMatchObject({
      code: 2,
      err: `ledgerloop show: unknown run id "no-such-run-anywhere": no such workflow in namespace ${stack.server.namespace}\n`,
    });
    const broken = path.join(tmp, 'broken-run.json');
    writeFileSync(broken, '{"goal": "x",');
    const malformed = await cli(['start', '--input', broken]);
    expect(malformed.code).toBe(2);
    expect(malformed.err).toMatch(/^ledgerloop start: --input: .*broken-run\.json is not valid JSON: .+\n$/);
    // No token (neither --token nor LEDGERLOOP_ACTOR_TOKEN): a usage error before anything is sent.
    const missing = await cli(['resolve', 'some-run', 'lc_1', '--outcome', 'FAILED', '--reason', 'x']);
    expect(missing).toMatchObject({
      code: 2,
      err: 'ledgerloop resolve: this command needs your identity token: --token <jws|@file> or LEDGERLOOP_ACTOR_TOKEN (the run verifies it and records who you are)\n',
    });
  });

  test('a server that does not answer is named in the message (exit 3)', async () => {
    const address = `127.0.0.1:${await getFreePort()}`;
    const r = await cli(['list', '--address', address], { server: false });
    expect(r.code).toBe(3);
    expect(r.err).toContain(`ledgerloop list: cannot reach the Temporal server at ${address}`);
  });
});
