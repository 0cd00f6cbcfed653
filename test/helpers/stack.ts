/**
 * Integration-test stack: the Temporal server named by TEMPORAL_ADDRESS (`npm test` starts one), a fresh
 * wallet process per test file, and in-process workers that replay every workflow task (no cache).
 */
import type { PolicyStore } from '../../src/stores/policy-store';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { Worker } from '@temporalio/worker';
import { startStack, type BusinessService, type Stack } from '../../lab/stack';
import { REPO_ROOT } from '../../host/worker/bundle';
import { createActivities, type Activities } from '../../activities';
import type { ModelProvider } from '../../src/planner/model';
import { DownstreamClient } from '../../src/downstream/client';
import { NativeConnection } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { DISCARD_WORKFLOW_SPANS, type Tracing } from '../../src/observability/tracing';
import { staticIdentitySource, type IdentitySource } from '../../src/identity/config';
import { labScriptedModel } from '../../lab/scenarios';
import { installRuntimeLogger } from '../../src/observability/logger';
import { workerDataConverter } from '../../src/codec/message-guard';
import { QuotaStore } from '../../src/stores/quota-store';
import { SqliteQuotaBackend } from '../../src/stores/quota-store-sqlite';

/** Where the test stacks keep their workflow bundles (git-ignored, like all of `.data/`). */
export const TEST_BUNDLE_CACHE = path.join(REPO_ROOT, '.data', 'bundle-cache');

/** Installs the SDK runtime with a logger that prints errors only (once per process). */
export function quietRuntime(): void {
  installRuntimeLogger({ component: 'test', level: 'ERROR', format: 'text' });
}

export async function startTestStack(
  name: string,
  opts: {
    walletRetentionMs?: number;
    dataConverter?: DataConverter;
    tracing?: Tracing;
    services?: readonly BusinessService[];
  } = {},
): Promise<Stack> {
  quietRuntime();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `ledgerloop-${name}-`));
  // One bundle per distinct set of options for the whole suite, not one per test file (lab/bundle-cache.ts).
  return startStack({ name, dataDir, server: { headless: true }, bundleCache: TEST_BUNDLE_CACHE, ...opts });
}

let queue = 0;
export function taskQueue(name: string): string {
  queue += 1;
  return `${name}-${process.pid}-${Date.now()}-${queue}`;
}

/**
 * An in-process worker with maxCachedWorkflows 0, so every workflow task replays the history from the start.
 * It uses the stack's data converter and tracing unless `opts.dataConverter` says otherwise.
 */
export async function inProcessWorker(
  stack: Stack,
  tq: string,
  services: Record<string, string> = { ...stack.serviceUrls },
  opts: {
    dataConverter?: DataConverter;
    policies?: PolicyStore;
    noCapabilityKey?: boolean;
    identity?: IdentitySource;
    /** The models the worker plans with; default the scripted model. */
    models?: readonly ModelProvider[];
    /** The workflow bundle; default the stack's (which carries the lab's naive loop). */
    bundlePath?: string;
    /** Replace some of the worker's activities (e.g. a planner built before a change). */
    activities?: (built: Activities) => Activities;
  } = {},
): Promise<Worker> {
  const dataConverter = opts.dataConverter ?? stack.dataConverter;
  const connection = await NativeConnection.connect({ address: stack.server.address });
  const clients = Object.fromEntries(
    Object.entries(services).map(([k, url]) => [k, new DownstreamClient({ baseUrl: url, timeoutMs: 2_000 })]),
  );
  const activities = createActivities({
    models: opts.models ?? [labScriptedModel()],
    services: clients,
    workerIdentity: `test-worker:${process.pid}`,
    authorize: {
      ...(opts.noCapabilityKey ? {} : { capabilityKey: stack.capabilityKey }),
      ...(opts.policies ? { policies: opts.policies } : {}),
    },
    // Cross-run rate limits: the stack's one quota file, shared by every worker of the stack (a tenant per test).
    quota: { store: new QuotaStore(new SqliteQuotaBackend(stack.quotaDb)) },
    // The stack's development issuer (public keys only); `opts.identity` replaces it (e.g. none configured).
    identity: { issuers: opts.identity ?? staticIdentitySource([stack.identity.config]) },
  });
  return Worker.create({
    connection,
    namespace: stack.server.namespace,
    taskQueue: tq,
    workflowBundle: { codePath: opts.bundlePath ?? stack.bundlePath },
    activities: opts.activities ? opts.activities(activities) : activities,
    maxCachedWorkflows: 0,
    // As a production worker has it (host/worker/worker.ts): the message guard in front of the stack's codecs.
    dataConverter: workerDataConverter(dataConverter),
    ...(stack.tracing ? { plugins: [stack.tracing.plugin] } : { sinks: DISCARD_WORKFLOW_SPANS }),
  });
}

export function deadlineIn(ms: number): string {
  return new Date(Date.now() + ms).toISOString();
}
