/**
 * The processes a protocol run needs: one Temporal dev server for the whole run (or TEMPORAL_ADDRESS), a dev
 * server of its own for a case that restarts the server, the workflow bundle built once, and per case FRESH
 * downstream service processes on fresh SQLite databases (so their counts belong to that case alone).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import type { NativeConnection } from '@temporalio/worker';
import { connectNative, serverTarget } from '../../host/server/connection-config';
import type { DevIssuer } from '../../src/identity/issue';
import { PROJECT_CONFIG_ENV } from '../../host/project/environment';
import type { CapabilityTrust } from '../../src/capability/capability-keys';
import type { Policy } from '../../src/domain/policy-format';
import type { DevServer } from '../../host/server/dev-server';
import { writeWorkflowBundle } from '../../host/worker/bundle';
import {
  startLinkedServer,
  startServices,
  startStack,
  type ServerLink,
  type StackService,
  type StackServices,
} from '../stack';
import { LAB_STRATEGY_WORKFLOW_MODULE } from '../strategies';
import { FAULT_WORKFLOW_INTERCEPTORS_MODULE } from './crash-points';
import type { PointFeature } from './catalog';
import type { PlannedCase } from './plan';
import type { ServiceName } from './protocol-format';

export type { ServerLink } from '../stack';

export interface Lab {
  readonly shared: ServerLink;
  /**
   * A worker connection to the shared server, open for the whole run: the in-process workers that rebuild and
   * replay each case use it, and it keeps the process's Temporal runtime alive between them (the SDK shuts an idle
   * runtime down, and cases run side by side would race its teardown against their next worker).
   */
  readonly native: NativeConnection;
  readonly bundlePath: string;
  /** Features found in the workflow bundle (e.g. the saga), for crash points that need them. */
  readonly features: ReadonlySet<PointFeature>;
  /** The lab's capability keys: workers get the dispatch signing key, services the public key set. */
  readonly capabilityTrust: CapabilityTrust;
  /** The lab's development identity issuer: workers get its public keys, the runner mints run and approver tokens. */
  readonly identity: DevIssuer;
  /** What every worker of the lab gets: the dispatch key, the issuer's public keys, lab strategies allowed. */
  readonly workerEnv: Readonly<Record<string, string>>;
  readonly dataDir: string;
  readonly dataConverter?: DataConverter;
  /** A project's lab: its services' process entries by name (each case starts them fresh). */
  readonly serviceEntries?: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

/** What a project's lab needs: its config file (the workers read it) and its services' process entries. */
export interface LabProject {
  readonly configFile: string;
  readonly serviceEntries: Readonly<Record<string, string>>;
}

/** Which features the built workflow code has. The saga appends CompensationStarted events when it runs. */
export function bundleFeatures(code: string): Set<PointFeature> {
  const features = new Set<PointFeature>();
  if (/type:\s*['"]CompensationStarted['"]/.test(code)) features.add('saga');
  return features;
}

/** The workflow bundle of this build, written once per protocol run, and the features found in it. */
export interface BuiltBundle {
  readonly bundlePath: string;
  readonly features: ReadonlySet<PointFeature>;
}

/** Bundles the workflows into `dataDir` (before any server starts, so a missing feature stops the run early). */
export async function buildBundle(dataDir: string, toolsModule?: string): Promise<BuiltBundle> {
  mkdirSync(dataDir, { recursive: true });
  const bundlePath = await writeWorkflowBundle(path.join(dataDir, 'workflow-bundle.js'), {
    interceptorModules: [FAULT_WORKFLOW_INTERCEPTORS_MODULE, LAB_STRATEGY_WORKFLOW_MODULE],
    ...(toolsModule !== undefined ? { toolsModule } : {}),
  });
  return { bundlePath, features: bundleFeatures(readFileSync(bundlePath, 'utf8')) };
}

/**
 * Starts (or, with TEMPORAL_ADDRESS, connects to) the protocol run's shared Temporal server, with the lab's keys
 * and no services (each case starts its own).
 */
export async function openLab(dataDir: string, bundle: BuiltBundle, project?: LabProject): Promise<Lab> {
  const stack = await startStack({
    dataDir,
    server: { headless: true, ephemeral: true, logFile: path.join(dataDir, 'temporal.log') },
    wallet: false,
    identityDir: path.join(dataDir, 'identity'),
    bundle: { prebuilt: bundle.bundlePath },
    tracing: null,
  });
  const { server, connection, client } = stack;
  let native: NativeConnection;
  try {
    native = (await connectNative(serverTarget(server))).connection;
  } catch (err) {
    await stack.stop();
    throw err;
  }
  return {
    shared: { server, connection, client },
    native,
    identity: stack.identity,
    // A project's workers serve its tools, scenarios and policy (host/worker/main.ts reads the config).
    workerEnv: project ? { ...stack.workerEnv, [PROJECT_CONFIG_ENV]: project.configFile } : stack.workerEnv,
    ...(project ? { serviceEntries: project.serviceEntries } : {}),
    bundlePath: stack.bundlePath,
    features: bundle.features,
    capabilityTrust: stack.capabilityTrust,
    dataDir,
    ...(stack.dataConverter ? { dataConverter: stack.dataConverter } : {}),
    async stop() {
      await native.close().catch(() => undefined);
      await stack.stop();
    },
  };
}

/** A dev server of the case's own (the server-restart case), on a database in the case directory. */
export function startOwnServer(lab: Lab, dir: string): Promise<ServerLink<DevServer>> {
  return startLinkedServer(
    { headless: true, ephemeral: true, dbFile: path.join(dir, 'temporal.db'), logFile: path.join(dir, 'temporal.log') },
    lab.dataConverter ? { dataConverter: lab.dataConverter } : {},
  );
}

export type CaseServiceProcess = StackService<ServiceName>;

/** The case's downstream processes. */
export type CaseServices = StackServices<ServiceName>;

/** Spawns the case's services on fresh databases (on `ports`, in order, when given), seeds its wallet accounts and sends its setup requests. */
export async function startCaseServices(
  lab: Lab,
  pc: PlannedCase,
  dir: string,
  ports: readonly number[] = [],
): Promise<CaseServices> {
  const entries = lab.serviceEntries;
  const services = await startServices(pc.services, {
    capabilityTrust: lab.capabilityTrust,
    ...(entries !== undefined
      ? {
          entry: (name: string) => {
            const entry = entries[name];
            if (entry === undefined)
              throw new Error(`case "${pc.name}": the project config names no process entry (services.${name}.main)`);
            return entry;
          },
        }
      : {}),
    dbPath: (name) => path.join(dir, `${name}.db`),
    ports,
    clientTimeoutMs: 5_000,
  });
  const { byName, stop } = services;
  const wallet = byName.get('wallet');
  try {
    for (const a of pc.accounts) {
      if (!wallet) throw new Error(`case "${pc.name}" seeds accounts but runs no wallet`);
      await wallet.client.seedAccount(a);
    }
    for (const r of pc.setup) {
      const svc = byName.get(r.service);
      if (!svc) throw new Error(`case "${pc.name}": setup names ${r.service}, which the case does not run`);
      await svc.client.request(r.method, r.path, r.body);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return services;
}

/** Writes a policy file atomically (write, then rename), so a worker never reads half a file. */
export function publishPolicy(file: string, policy: Policy): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(policy, null, 2)}\n`);
  renameSync(tmp, file);
}
