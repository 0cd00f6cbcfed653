/**
 * A time-skipping test environment (virtual clock for timers, deadlines, expiry) on the pinned test server
 * binary from `.tools/venv`; never the SDK's download. One environment per test file; tests run serially.
 */
import { TestWorkflowEnvironment, type TimeSkippingTestWorkflowEnvironmentOptions } from '@temporalio/testing';
import { resolveTestServer } from './temporal-binaries';

export type TimeSkippingEnvOptions = Omit<TimeSkippingTestWorkflowEnvironmentOptions, 'server'> & {
  /** Extra arguments for the test server binary. */
  extraArgs?: string[];
  /** Port for the test server; default a random free one. */
  port?: number;
};

export async function createTimeSkippingEnv(opts: TimeSkippingEnvOptions = {}): Promise<TestWorkflowEnvironment> {
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
