/**
 * What every file of the fast workflow tier sets up once: a time-skipping test server, the workflow bundle (with
 * the file's extra interceptor modules, if any) and a dev identity issuer, in a temporary directory removed after
 * the file. Call `workflowTier` at the top of a test file; its fields are ready inside the tests.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities, type Activities } from '../../activities';
import { labScriptedModel } from '../../lab/scenarios';
import { staticIdentitySource } from '../../src/identity/config';
import { createDevIssuer, type DevIssuer } from '../../src/identity/issue';
import { DISCARD_WORKFLOW_SPANS } from '../../src/observability/tracing';
import type { PolicyStore } from '../../src/stores/policy-store';
import { createTimeSkippingEnv } from '../../host/server/time-skipping';
import { writeWorkflowBundle } from '../../host/worker/bundle';
import { quietRuntime } from '../helpers/stack';

export interface WorkflowTier {
  readonly env: TestWorkflowEnvironment;
  readonly bundlePath: string;
  readonly issuer: DevIssuer;
}

/** What a tier worker runs beside the real activities (the scripted model, the authorizer, identity). */
export interface TierWorkerOptions {
  /** Activities in place of the real ones (the stub downstream, a counting wrapper), given the real ones. */
  readonly stubs: (real: Activities) => Partial<Activities>;
  /** The authorizer's policies; default the built-in policy. */
  readonly policies?: PolicyStore;
  readonly workerIdentity?: string;
}

/** A worker of `tier` on `taskQueue`: the real activities with `stubs` over them, verifying the tier's issuer. */
export function tierWorker(tier: WorkflowTier, taskQueue: string, o: TierWorkerOptions): Promise<Worker> {
  const real = createActivities({
    models: [labScriptedModel()],
    services: {},
    workerIdentity: o.workerIdentity ?? 'wf-tier',
    identity: { issuers: staticIdentitySource([tier.issuer.config]) },
    ...(o.policies ? { authorize: { policies: o.policies } } : {}),
  });
  return Worker.create({
    connection: tier.env.nativeConnection,
    taskQueue,
    workflowBundle: { codePath: tier.bundlePath },
    activities: { ...real, ...o.stubs(real) },
    sinks: DISCARD_WORKFLOW_SPANS,
  });
}

/** Registers the file's `beforeAll` and `afterAll`; `name` prefixes the temporary directory. */
export function workflowTier(name: string, bundle: { readonly interceptorModules?: string[] } = {}): WorkflowTier {
  let ready: WorkflowTier | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    quietRuntime();
    dir = mkdtempSync(path.join(os.tmpdir(), `ledgerloop-${name}-`));
    const [env, bundlePath, issuer] = await Promise.all([
      createTimeSkippingEnv(),
      writeWorkflowBundle(path.join(dir, 'bundle.js'), bundle),
      createDevIssuer(path.join(dir, 'identity')),
    ]);
    ready = { env, bundlePath, issuer };
  });
  afterAll(async () => {
    await ready?.env.teardown();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  const get = (): WorkflowTier => {
    if (ready === undefined) throw new Error('the workflow tier is set up in beforeAll: use it inside a test');
    return ready;
  };
  return {
    get env() {
      return get().env;
    },
    get bundlePath() {
      return get().bundlePath;
    },
    get issuer() {
      return get().issuer;
    },
  };
}
