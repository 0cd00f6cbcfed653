/**
 * Lines the SDK core logs that no one who reads Ledgerloop's logs should act on, and the one test for them. The
 * core's lines reach the runtime logger (`installRuntimeLogger` forwards them) with `sdkComponent: 'core'`; each
 * entry below is one exact message, dropped with the reason written beside it. Every other core line is kept.
 */
import type { LogEntry } from '@temporalio/worker';

/**
 * The messages dropped, each an exact string: a wording change in a new SDK lets the line through again, so a
 * changed warning is read before it is silenced.
 */
const UNACTIONABLE_CORE_LINES: ReadonlySet<string> = new Set([
  // Logged by every worker that polls activities on the time-skipping test server, which advertises no
  // `activity_failure_include_heartbeat` capability (the pinned dev server does). Ledgerloop's attempts heartbeat
  // only to show an operator, in history, which attempt ran last (activities/dispatch/attempt.ts); no workflow or
  // activity reads heartbeat details back from a failure, so details lost on failure change nothing Ledgerloop
  // decides. The line is noise in every test run and would teach a reader to skip warnings.
  'Temporal Server 1.16.0 or newer is required to guarantee that the latest heartbeat details are preserved when an activity fails; the server did not advertise the activity_failure_include_heartbeat capability, so heartbeat details may be lost on failure',
]);

/** Whether `entry` is a core line listed above (a line from any other source is never dropped). */
export function isUnactionableCoreLine(entry: LogEntry): boolean {
  return entry.meta?.sdkComponent === 'core' && UNACTIONABLE_CORE_LINES.has(entry.message);
}
