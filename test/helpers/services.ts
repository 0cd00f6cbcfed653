/**
 * Plumbing for tests of the downstream services as real processes: a temp directory, spawned services with
 * their clients, and polling. Every process of a sandbox trusts the sandbox's capability key set (services refuse
 * to start without one; the relay gets its own signing key) and has an admin listener; each client signs its own
 * requests with the sandbox's dispatch key and reaches the admin routes with the admin token.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AdminClient } from '../../services/admin-client';
import {
  generateCapabilityTrust,
  type CapabilitySigningKey,
  type CapabilityTrust,
} from '../../src/capability/capability-keys';
import {
  spawnedClient,
  spawnService,
  type ServiceName,
  type SpawnedService,
  type SpawnServiceOptions,
} from '../../services/spawn';

/** A spawned service and a client for it. */
export interface ServiceUnderTest {
  readonly proc: SpawnedService;
  readonly client: AdminClient;
}

/** A temp directory holding the databases of one test file, and the processes started in it. */
export class ServiceSandbox {
  readonly dir: string;
  /** The keys every process of this sandbox verifies (or, the relay, signs) with. */
  readonly trust: CapabilityTrust = generateCapabilityTrust();
  private readonly started: SpawnedService[] = [];

  constructor(prefix: string) {
    this.dir = mkdtempSync(path.join(os.tmpdir(), `ledgerloop-${prefix}-`));
  }

  /** A database path inside the sandbox. */
  db(name: string): string {
    return path.join(this.dir, name);
  }

  /** The dispatch key the sandbox's clients sign with. */
  get capabilityKey(): CapabilitySigningKey {
    return this.trust.dispatch;
  }

  /**
   * Spawns `name` on `dbFile` (inside the sandbox) and returns it with a client. `opts.trust` gives the process
   * (and its client) other keys than the sandbox's; `opts.env` is merged last.
   */
  async start(
    name: ServiceName,
    dbFile: string,
    opts: Omit<SpawnServiceOptions, 'dbPath'> & { readonly trust?: CapabilityTrust } = {},
  ): Promise<ServiceUnderTest> {
    const { trust = this.trust, ...spawnOpts } = opts;
    const env = { ...trust.serviceEnv, ...(name === 'orders-relay' ? trust.relayEnv : {}), ...opts.env };
    const proc = await spawnService(name, { ...spawnOpts, env, dbPath: this.db(dbFile) });
    this.started.push(proc);
    return { proc, client: spawnedClient(proc, { capabilityKey: trust.dispatch, timeoutMs: 5_000 }) };
  }

  /** Stops every process started here and removes the directory. */
  async dispose(): Promise<void> {
    await Promise.all(this.started.map((p) => p.stop()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Polls `check` every 25 ms until it holds; throws after `ms`. `explain`, when given, is asked once on timeout
 * for the state the check saw, so a failure in CI carries its evidence.
 */
export async function waitFor(
  check: () => Promise<boolean> | boolean,
  ms = 10_000,
  explain?: () => Promise<unknown>,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) {
      const seen = explain === undefined ? '' : `; last state: ${JSON.stringify(await explain().catch(String))}`;
      throw new Error(`condition not reached within ${ms} ms${seen}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Resolves once the process exited; returns its exit code and signal. */
export function exited(proc: SpawnedService): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const { child } = proc;
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** A fresh unique suffix for keys and ids within a test file. */
let counter = 0;
export function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${Date.now().toString(36)}`;
}

/**
 * An intent time recorded now, for a test that plays a caller sending a fresh intent (`X-Intent-At`). A test
 * of a late or repeated attempt passes the first attempt's time instead.
 */
export function intentNow(): string {
  return new Date().toISOString();
}
