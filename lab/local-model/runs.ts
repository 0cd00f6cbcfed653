/**
 * Governed runs planned by the real local model, on two projects:
 *
 * - the wallet scenario: a stack (lab/stack.ts) with all five simulated services, and a worker PROCESS configured
 *   only by its environment (OPENAI_BASE_URL, LEDGERLOOP_OPENAI_MODEL), exactly as it would be for a hosted
 *   provider: the real `openai` client of src/planner/openai-env.ts talks to the local server;
 * - the examples/ticketing project: its own service, keys, policy and worker (`createWorker`), given
 *   `openAIModel(...)` over the same server with the project's own tools.
 *
 * Each run's goal is drawn from a seeded PRNG, so a seed names the same goals on every machine. What a run leaves
 * (result, ledger, the model's raw proposals from the transcript store) and the services' effect logs go to the
 * checker (check.ts).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { readLedger, startAgentRun } from '../../host/client/runs';
import { DEFAULT_CAPS, type AgentRunInput, type AgentRunResult } from '../../src/domain/run';
import type { LedgerEvent } from '../../src/domain/ledger-events';
import { openAIDepsFromEnv } from '../../src/planner/openai-env';
import { SqliteTranscriptStore } from '../../src/stores/transcript-store';
import { createPrng } from '../faults/prng';
import { readEffectLog } from '../faults/explore-records';
import type { EffectRow } from '../faults/explore-invariants';
import { spawnWorker, type WorkerProcess } from '../spawn-worker';
import { startStack, type BusinessService, type Stack, type StackServer } from '../stack';
import type { ModelRunRecord } from './check';
import type { LocalModelProcess } from './server-process';
import { readDebits, readTickets } from './task-rows';
import type { Goal, TaskRows, TaskSpec } from './tasks';

export const WALLET_SERVICES: readonly BusinessService[] = [
  'wallet',
  'inventory',
  'shipping',
  'orders',
  'notifications',
];
export const TENANT = 'acme';
export const PRINCIPAL = 'user:alice';

/** Settings every model run gets: room for a slow machine, few turns. */
export interface ModelRunSettings {
  readonly deadlineMs: number;
  readonly modelAttemptMs: number;
  readonly maxTurns: number;
  readonly temperature: number;
  readonly maxOutputTokens: number;
}

export const DEFAULT_RUN_SETTINGS: ModelRunSettings = {
  deadlineMs: 300_000,
  modelAttemptMs: 120_000,
  maxTurns: 4,
  temperature: 0,
  maxOutputTokens: 256,
};

/** A run's record plus what the model proposed, as raw text (from the transcript store). */
export interface ModelRun extends ModelRunRecord {
  readonly goal: string;
  /** What the goal asks for, judged on the downstream's storage (tasks.ts). */
  readonly task?: TaskSpec;
  /** Each proposal's raw argument text by provider call id. */
  readonly rawArguments: ReadonlyMap<string, string>;
  readonly seconds: number;
}

function openAIInput(goal: string, s: ModelRunSettings): AgentRunInput {
  return {
    principal: { id: PRINCIPAL, tenant: TENANT },
    goal,
    strategy: 'same_key_replay',
    planner: { kind: 'openai', model: '', temperature: s.temperature, maxOutputTokens: s.maxOutputTokens },
    deadlineAt: new Date(Date.now() + s.deadlineMs).toISOString(),
    caps: { modelAttemptMs: s.modelAttemptMs, toolAttemptMs: 5_000 },
    budgets: { maxTurns: s.maxTurns, maxToolCalls: 8 },
  };
}

/** A wallet goal: charge an amount to an account (its task: that one debit in the wallet's database). */
export function walletGoal(minor: number, account: string, order?: number): Goal {
  const eur = `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
  const forOrder = order !== undefined ? ` for order ${order}` : '';
  return {
    text: `Charge ${eur} EUR (${minor} minor units) to account ${account}${forOrder}, then reply with one short sentence.`,
    task: { kind: 'wallet_debit', tenant: TENANT, account, amountMinor: minor, currency: 'EUR' },
  };
}

/** The wallet goals of a seed: an amount, an account that exists, an order number. */
export function walletGoals(seed: number, n: number): Goal[] {
  const prng = createPrng(seed, 'local-model-wallet');
  return Array.from({ length: n }, () => {
    const minor = prng.int(1, 400) * 50;
    const account = `acct_${prng.int(1, 3)}`;
    return walletGoal(minor, account, prng.int(1000, 9999));
  });
}

const TICKET_TITLES = [
  'Printer on floor 3 is jammed',
  'VPN drops every hour',
  'Replace the badge reader at the north door',
  'Laptop battery swells',
  'Projector in room 2.14 has no signal',
  'Coffee machine leaks water',
];

/** The ticketing goals of a seed: a title in project `ops` (its task: that open ticket in the service's database). */
export function ticketGoals(seed: number, n: number): Goal[] {
  const prng = createPrng(seed, 'local-model-ticketing');
  return Array.from({ length: n }, () => {
    const title = TICKET_TITLES[prng.int(0, TICKET_TITLES.length - 1)]!;
    return {
      text: `Open a ticket in project ops titled "${title}", then reply with one short sentence.`,
      task: { kind: 'ticket', tenant: TENANT, project: 'ops', title },
    };
  });
}

async function collect(
  name: string,
  goal: Goal,
  handle: Awaited<ReturnType<typeof startAgentRun>>,
  input: AgentRunInput,
  transcripts: SqliteTranscriptStore,
  started: number,
): Promise<ModelRun> {
  let result: AgentRunResult | undefined;
  let error: string | undefined;
  // A run must close by its deadline plus its abort grace; the wait for its result is bounded a minute past that,
  // and a run still open then is terminated (the checker reports it: no typed stop).
  const waitMs =
    Date.parse(input.deadlineAt) + (input.caps?.abortGraceMs ?? DEFAULT_CAPS.abortGraceMs) + 60_000 - Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    result = await Promise.race([
      handle.result(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no result ${Math.round(waitMs / 1000)} s after the start`)), waitMs);
      }),
    ]);
  } catch (err) {
    error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    await handle.terminate('local model check: the run did not close by its deadline').catch(() => undefined);
  } finally {
    clearTimeout(timer);
  }
  let events: readonly LedgerEvent[] = [];
  try {
    events = (await readLedger(handle)).events;
  } catch (err) {
    error ??= `the ledger could not be read: ${(err as Error).message}`;
  }
  const rawArguments = new Map<string, string>();
  for (const t of await transcripts.loadTurns(handle.workflowId, Number.MAX_SAFE_INTEGER)) {
    for (const c of t.assistant.toolCalls) rawArguments.set(c.id, c.arguments);
  }
  return {
    name,
    goal: goal.text,
    task: goal.task,
    workflowId: handle.workflowId,
    deadlineAt: input.deadlineAt,
    ...(result ? { result } : {}),
    ...(error ? { error } : {}),
    events,
    rawArguments,
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
}

export interface WalletRig {
  readonly stack: Stack<StackServer>;
  readonly worker: WorkerProcess;
  readonly taskQueue: string;
  readonly transcriptDb: string;
  /** The database file of each service of the stack. */
  readonly dbPaths: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

export interface WalletRigOptions {
  readonly name: string;
  readonly server?: { readonly headless: true } | { readonly port: number; readonly uiPort: number };
  /** Use this Temporal server instead of starting one (the bench's). */
  readonly temporal?: { readonly address: string; readonly namespace: string };
  readonly onProgress?: (line: string) => void;
}

/** The wallet scenario's stack, seeded accounts, and a worker process that plans with the local model. */
export async function startWalletRig(model: LocalModelProcess, o: WalletRigOptions): Promise<WalletRig> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `ledgerloop-${o.name}-`));
  const temporal = o.temporal;
  const stack = await startStack<StackServer>({
    name: o.name,
    dataDir,
    services: WALLET_SERVICES,
    dbFile: (name) => `${name}.db`,
    ...(temporal
      ? {
          startServer: async () => ({ address: temporal.address, namespace: temporal.namespace, stop: async () => {} }),
        }
      : { server: o.server ?? { headless: true }, ownServer: o.server !== undefined && !('headless' in o.server) }),
  });
  try {
    for (const account of ['acct_1', 'acct_2', 'acct_3']) {
      await stack.walletClient.seedAccount({ tenant: TENANT, account, balanceMinor: 1_000_000, currency: 'EUR' });
    }
    const taskQueue = `${o.name}-${Date.now().toString(36)}`;
    const transcriptDb = path.join(dataDir, 'transcripts.db');
    o.onProgress?.(`starting a worker process on task queue ${taskQueue} with OPENAI_BASE_URL=${model.baseUrl}`);
    const worker = await spawnWorker({
      address: stack.server.address,
      taskQueue,
      services: stack.serviceUrls,
      workflowBundlePath: stack.bundlePath,
      env: {
        ...stack.workerEnv,
        // The worker reaches the model as it would reach a hosted provider: by its environment.
        OPENAI_BASE_URL: model.baseUrl,
        OPENAI_API_KEY: '', // never send a key of the caller's environment to the local server
        LEDGERLOOP_OPENAI_MODEL: model.modelId,
        LEDGERLOOP_TRANSCRIPT_DB: transcriptDb,
        LEDGERLOOP_TRANSCRIPT_URL: '',
      },
    });
    const dbPaths = Object.fromEntries(WALLET_SERVICES.map((s) => [s, path.join(dataDir, `${s}.db`)]));
    return {
      stack,
      worker,
      taskQueue,
      transcriptDb,
      dbPaths,
      async stop() {
        await worker.stop();
        await stack.stop();
      },
    };
  } catch (err) {
    await stack.stop();
    throw err;
  }
}

/** One governed run on the wallet rig. */
export async function runWalletGoal(
  rig: WalletRig,
  name: string,
  goal: Goal,
  settings: ModelRunSettings = DEFAULT_RUN_SETTINGS,
): Promise<ModelRun> {
  const started = Date.now();
  const input = openAIInput(goal.text, settings);
  const handle = await startAgentRun(rig.stack.client, {
    workflowId: `${name.replace(/[^a-z0-9-]+/gi, '-')}-${Date.now().toString(36)}`,
    taskQueue: rig.taskQueue,
    identityToken: (run) => rig.stack.identity.issueFor({ purpose: 'start', run }, PRINCIPAL, TENANT),
    input,
  });
  const transcripts = new SqliteTranscriptStore(rig.transcriptDb);
  try {
    return await collect(name, goal, handle, input, transcripts, started);
  } finally {
    await transcripts.close();
  }
}

/** Every effect the wallet rig's services committed, from their own databases. */
export function walletEffects(rig: WalletRig): EffectRow[] {
  return Object.entries(rig.dbPaths).flatMap(([service, db]) => readEffectLog(db, service));
}

/** What the task judge reads of the wallet rig's databases. */
export function walletTaskRows(rig: WalletRig): TaskRows {
  return { debits: readDebits(rig.dbPaths.wallet!), tickets: [], effects: walletEffects(rig) };
}

export interface TicketingRuns {
  readonly runs: readonly ModelRun[];
  readonly effects: readonly EffectRow[];
  /** What the task judge reads of the ticketing service's database. */
  readonly taskRows: TaskRows;
}

/**
 * The examples/ticketing project with the local model: its keys, its service (in process, as its demo runs it),
 * its worker with `openAIModel` over the local server and the project's tools, one run per goal.
 */
export async function runTicketingGoals(
  model: LocalModelProcess,
  temporal: { readonly address: string; readonly namespace: string },
  goals: readonly Goal[],
  settings: ModelRunSettings = DEFAULT_RUN_SETTINGS,
  onProgress?: (line: string) => void,
): Promise<TicketingRuns> {
  // The project's own modules, loaded only here (they import `ledgerloop` as a user project does).
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { createProjectKeys } =
    require('../../examples/ticketing/src/keys') as typeof import('../../examples/ticketing/src/keys');
  const { startTicketingService } =
    require('../../examples/ticketing/src/service/ticketing-service') as typeof import('../../examples/ticketing/src/service/ticketing-service');
  const { startTicketingWorker } =
    require('../../examples/ticketing/src/worker') as typeof import('../../examples/ticketing/src/worker');
  const { workflowTools } =
    require('../../examples/ticketing/src/tools/workflow-tools') as typeof import('../../examples/ticketing/src/tools/workflow-tools');
  // The runtime as the project sees it: its package entries (in a clone, this repository itself).
  const { ensureSearchAttributes } = require('ledgerloop') as typeof import('ledgerloop');
  const { openAIModel } = require('ledgerloop/worker') as typeof import('ledgerloop/worker');
  const { keySetFromJwks } = require('ledgerloop/services') as typeof import('ledgerloop/services');
  /* eslint-enable @typescript-eslint/no-require-imports */
  // The project's worker registers the search attributes it writes, as its `npm run worker` does.
  await ensureSearchAttributes(temporal.address, temporal.namespace);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerloop-local-model-ticketing-'));
  const keys = await createProjectKeys(path.join(dir, 'keys'));
  const dbPath = path.join(dir, 'ticketing.db');
  const service = await startTicketingService({ dbPath, capabilityKeys: keySetFromJwks(keys.jwks) });
  const transcriptDb = path.join(dir, 'transcripts.db');
  const deps = openAIDepsFromEnv({
    OPENAI_BASE_URL: model.baseUrl,
    LEDGERLOOP_OPENAI_MODEL: model.modelId,
    LEDGERLOOP_TRANSCRIPT_DB: transcriptDb,
  });
  const taskQueue = `local-model-ticketing-${Date.now().toString(36)}`;
  onProgress?.(
    `starting the ticketing project's worker on task queue ${taskQueue} (its own tools, policy and service)`,
  );
  const { worker, connection: workerConnection } = await startTicketingWorker({
    ticketingUrl: service.url,
    keys,
    taskQueue,
    address: temporal.address,
    namespace: temporal.namespace,
    model: openAIModel(deps, workflowTools),
  });
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection, namespace: temporal.namespace });
  const transcripts = new SqliteTranscriptStore(transcriptDb);
  const runs: ModelRun[] = [];
  try {
    await worker.runUntil(async () => {
      for (const [i, goal] of goals.entries()) {
        const name = `ticketing #${i + 1}`;
        onProgress?.(`${name}: ${goal.text}`);
        const started = Date.now();
        const input = openAIInput(goal.text, settings);
        const handle = await startAgentRun(client, {
          workflowId: `local-model-ticket-${i + 1}-${Date.now().toString(36)}`,
          taskQueue,
          identityToken: (run) => keys.issue(PRINCIPAL, TENANT, [], { purpose: 'start', run }),
          input,
        });
        runs.push(await collect(name, goal, handle, input, transcripts, started));
      }
    });
    const effects = readEffectLog(dbPath, 'ticketing');
    return { runs, effects, taskRows: { debits: [], tickets: readTickets(dbPath), effects } };
  } finally {
    await transcripts.close();
    await connection.close();
    await workerConnection.close();
    await service.close();
    await deps?.transcriptStore?.close();
  }
}
