/**
 * An MCP call inside a real Ledgerloop run (issue #42): examples/mcp-files's own worker (createWorker with the
 * checked-in tool set and the worker's stdio connection to the registry's server-filesystem), the agent run
 * workflow on the dev server, the scripted model. A fault harness (lab/faults/mcp-stdio-fault.ts) sits between the
 * worker and the server: it loses the answer to the first `write_file` and kills the server mid-call. The call is
 * UNKNOWN, the worker restarts the server, the one recovery table reconciles by the declared lookup (read the
 * file), and the write reaches the server once, counted at the server's door and in the file system. `ledgerloop
 * show` and `ledgerloop audit` explain what happened.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { generateSigningKey } from '../../src/capability/capability-keys';
import { runNote, type NoteRun } from '../../examples/mcp-files/src/run-note';
import { startFilesWorker } from '../../examples/mcp-files/src/worker';
import { quietRuntime, taskQueue } from '../helpers/stack';

jest.setTimeout(180_000);

const ROOT = path.resolve(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'ledgerloop.cjs');
const FAULT = path.join(ROOT, 'lab/faults/mcp-stdio-fault.ts');
const SERVER = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
const address = process.env.TEMPORAL_ADDRESS ?? 'localhost:7233';

let dir: string;
let dataDir: string;
let faults: string;
let issuer: DevIssuer;
let connection: Connection;
let client: Client;

/** The CLI as a user runs it, against the test's server. */
function cli(args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, ...args, '--address', address, '--namespace', 'default'], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1' },
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

const writesAtServer = (): number =>
  readFileSync(path.join(faults, 'calls.log'), 'utf8').trim().split('\n').filter(Boolean).length;

beforeAll(async () => {
  quietRuntime();
  dir = mkdtempSync(path.join(os.tmpdir(), 'll-mcp-run-'));
  dataDir = path.join(dir, 'files');
  faults = path.join(dir, 'faults');
  mkdirSync(dataDir);
  mkdirSync(faults);
  issuer = await createDevIssuer(path.join(dir, 'keys'));
  connection = await Connection.connect({ address });
  client = new Client({ connection });
});

afterAll(async () => {
  await connection?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('an MCP write inside a governed run', () => {
  let run: NoteRun;
  let control: NoteRun;
  let writesAfterFirstRun = 0;
  let show: { code: number; out: string; err: string };
  let audit: { code: number; out: string; err: string };
  let restarts = 0;
  const note = (): { path: string; content: string } => ({
    path: path.join(dataDir, 'note.txt'),
    content: 'written once',
  });

  beforeAll(async () => {
    const tq = taskQueue('mcp-run');
    const worker = await startFilesWorker({
      dataDir,
      capabilityKey: generateSigningKey(),
      issuers: [issuer.config],
      taskQueue: tq,
      address,
      // The registry's server behind the fault: the first write_file is answered by the server, then lost with it.
      server: {
        command: process.execPath,
        args: ['-r', 'tsx/cjs', FAULT, process.execPath, SERVER, dataDir],
        env: { MCP_FAULT_DIR: faults, MCP_FAULT_LOSE_TOOL: 'write_file', NODE_PATH: path.join(ROOT, 'node_modules') },
        cwd: ROOT,
      },
      connection: { restartDelayMs: 50, callTimeoutMs: 10_000 },
      extra: { maxCachedWorkflows: 0 },
    });
    try {
      await worker.worker.runUntil(async () => {
        run = await runNote(
          client,
          (workflowId) => issuer.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
          note(),
          { taskQueue: tq, workflowId: `mcp-run-${Date.now()}` },
        );
        writesAfterFirstRun = writesAtServer();
        // The ledger query is answered by a worker replaying the history: ask while this one runs.
        show = await cli(['show', run.workflowId]);
        audit = await cli(['audit', run.workflowId]);
        // The control: the fault is spent, so the next write's answer arrives.
        control = await runNote(
          client,
          (workflowId) => issuer.issueFor({ purpose: 'start', run: workflowId }, 'user:alice', 'acme'),
          { path: path.join(dataDir, 'control.txt'), content: 'answered' },
          { taskQueue: tq, workflowId: `mcp-run-control-${Date.now()}` },
        );
      });
      restarts = worker.mcp.connections.get('files')!.restarts;
    } finally {
      await worker.stop();
    }
  });

  test('a write_file whose answer is lost with its killed server is UNKNOWN, reconciled by reading the file, and written once', () => {
    expect(run.result.stopReason).toBe('completed');
    const [write, read] = run.result.calls;
    expect(write).toMatchObject({ toolName: 'files_write_file', state: 'SUCCEEDED' });
    expect(read).toMatchObject({ toolName: 'files_read_text_file', state: 'SUCCEEDED' });
    const types = run.ledger.events.map((e) => e.type);
    // The lost answer made the call UNKNOWN, never FAILED; the lookup settled it.
    expect(types).toEqual(expect.arrayContaining(['ToolOutcomeMarkedUnknown', 'ToolEffectReconciled']));
    expect(types.indexOf('ToolOutcomeMarkedUnknown')).toBeLessThan(types.indexOf('ToolEffectReconciled'));
    const unknown = run.ledger.events.find((e) => e.type === 'ToolOutcomeMarkedUnknown');
    expect(unknown).toMatchObject({ logicalCallId: write!.logicalCallId, attempts: 1 });
    expect(run.ledger.events.find((e) => e.type === 'ToolEffectReconciled')).toMatchObject({
      logicalCallId: write!.logicalCallId,
      outcome: 'SUCCEEDED',
      via: 'receipt_lookup',
    });
    expect(run.ledger.projection.calls[write!.logicalCallId]).toMatchObject({
      dispatches: 1,
      attempts: 2,
      reconciledVia: 'receipt_lookup',
    });
    // Effects counted where they are: the server received write_file once; the directory holds one file, as meant.
    expect(writesAfterFirstRun).toBe(1);
    expect(readdirSync(dataDir)).toContain('note.txt');
    expect(readFileSync(note().path, 'utf8')).toBe('written once');
    expect(statSync(note().path).size).toBe(Buffer.byteLength('written once'));
    // The worker restarted the killed server (the read after it went to the new process).
    expect(restarts).toBeGreaterThanOrEqual(1);
  });

  test('positive control: a write whose answer arrives settles on its first attempt, with no UNKNOWN', () => {
    expect(control.result.stopReason).toBe('completed');
    const [write] = control.result.calls;
    expect(write).toMatchObject({ toolName: 'files_write_file', state: 'SUCCEEDED' });
    expect(control.ledger.events.map((e) => e.type)).not.toContain('ToolOutcomeMarkedUnknown');
    expect(control.ledger.projection.calls[write!.logicalCallId]).toMatchObject({ attempts: 1, reconciledVia: null });
    expect(readFileSync(path.join(dataDir, 'control.txt'), 'utf8')).toBe('answered');
    // One write_file per intent reached the server over both runs.
    expect(writesAtServer()).toBe(2);
    expect(readdirSync(dataDir).sort()).toEqual(['control.txt', 'note.txt']);
  });

  test('`ledgerloop show` names the UNKNOWN outcome, the reconciliation and the settled call', () => {
    expect(show.code).toBe(0);
    expect(show.out).toContain('ToolOutcomeMarkedUnknown');
    expect(show.out).toContain('ToolEffectReconciled');
    const id = run.result.calls[0]!.logicalCallId;
    // The calls table: the write SUCCEEDED after two attempts of one dispatch, settled by the lookup.
    expect(show.out).toMatch(
      new RegExp(`${id}\\s+files_write_file\\s+SUCCEEDED\\s+op_\\S+\\s+1\\s+2\\s+receipt_lookup`),
    );
    expect(show.out).toMatch(new RegExp(`ToolOutcomeMarkedUnknown\\s+${id}`));
    expect(show.out).toMatch(new RegExp(`ToolEffectReconciled\\s+${id} outcome=SUCCEEDED via=receipt_lookup`));
    expect(show.out).toContain('status     stopped (completed)');
  });

  test('`ledgerloop audit` finds the principal, tenant, key and arguments hash of the MCP write in the history', () => {
    const key = run.result.calls[0]!.operationKey!;
    expect(audit.out).toContain('files_write_file');
    expect(audit.out).toContain(key);
    expect(audit.out).toContain('user:alice');
    expect(audit.out).toContain('an MCP server gives no receipt (mcp:files/write_file); settled via receipt_lookup');
    expect(audit.code).toBe(0);
  });
});
