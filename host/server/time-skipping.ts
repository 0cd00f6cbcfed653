/**
 * A time-skipping test environment (virtual clock for timers, deadlines, expiry) on the pinned test server
 * binary (`TEMPORAL_TEST_SERVER`, else the one `ledgerloop setup --test-server` put in the per-user cache); never
 * the SDK's download. One environment per test file; tests run serially.
 */
import { TestWorkflowEnvironment, type TimeSkippingTestWorkflowEnvironmentOptions } from '@temporalio/testing';
import { INDEXED_VALUE_TYPE } from './dev-server';
import { SEARCH_ATTRIBUTES } from '../../src/domain/search-attributes';
import { resolveTestServer } from './temporal-binaries';

export type TimeSkippingEnvOptions = Omit<TimeSkippingTestWorkflowEnvironmentOptions, 'server'> & {
  /** Extra arguments for the test server binary. */
  extraArgs?: string[];
  /** Port for the test server; default a random free one. */
  port?: number;
};

/**
 * Starts the time-skipping server and registers the project's search attributes on it (the workflow upserts
 * them; an unregistered one fails the workflow task with BadSearchAttributes).
 */
export async function createTimeSkippingEnv(opts: TimeSkippingEnvOptions = {}): Promise<TestWorkflowEnvironment> {
  const env = await startTimeSkipping(opts);
  const searchAttributes: Record<string, number> = {};
  for (const sa of SEARCH_ATTRIBUTES) searchAttributes[sa.name] = INDEXED_VALUE_TYPE[sa.type];
  await env.connection.operatorService.addSearchAttributes({ namespace: env.namespace ?? 'default', searchAttributes });
  return env;
}

function startTimeSkipping(opts: TimeSkippingEnvOptions): Promise<TestWorkflowEnvironment> {
  const { extraArgs, port, ...rest } = opts;
  return TestWorkflowEnvironment.createTimeSkipping({
    ...rest,
    server: {
      executable: { type: 'existing-path', path: resolveTestServer() },
      ...(extraArgs ? { extraArgs } : {}),
      ...(port !== undefined ? { port } : {}),
    },
  });
}
