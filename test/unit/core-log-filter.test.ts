import type { LogEntry } from '@temporalio/worker';
import { runtimeLogger } from '../../src/observability/logger';

const HEARTBEAT_CAPABILITY =
  'Temporal Server 1.16.0 or newer is required to guarantee that the latest heartbeat details are preserved when an activity fails; the server did not advertise the activity_failure_include_heartbeat capability, so heartbeat details may be lost on failure';

function captured(): { readonly lines: LogEntry[]; readonly logger: ReturnType<typeof runtimeLogger> } {
  const lines: LogEntry[] = [];
  const logger = runtimeLogger({ component: 'test', level: 'WARN', format: 'json', write: (_l, e) => lines.push(e) });
  return { lines, logger };
}

describe('the SDK core lines the runtime logger writes', () => {
  it("drops the core's heartbeat-capability warning that the time-skipping server provokes", () => {
    const { lines, logger } = captured();
    logger.warn(HEARTBEAT_CAPABILITY, { sdkComponent: 'core', target: 'temporalio_sdk_core::worker' });
    expect(lines).toEqual([]);
  });

  it('the positive control: another core warning is written', () => {
    const { lines, logger } = captured();
    logger.warn('Activity heartbeat failed.', { sdkComponent: 'core', target: 'temporalio_sdk_core::worker' });
    expect(lines.map((e) => e.message)).toEqual(['Activity heartbeat failed.']);
  });

  it('the same words from outside the core are written (only the core line is dropped)', () => {
    const { lines, logger } = captured();
    logger.warn(HEARTBEAT_CAPABILITY, { sdkComponent: 'worker' });
    logger.warn(`${HEARTBEAT_CAPABILITY}!`, { sdkComponent: 'core' });
    expect(lines.map((e) => e.meta?.sdkComponent)).toEqual(['worker', 'core']);
  });
});
