/**
 * The run's activities, proxied once. Every call site passes its own options (`executeWithOptions`): timeouts
 * derived from the run deadline, a summary for the UI. The base timeout here is always overridden.
 */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

export const activities = proxyActivities<Activities>({ startToCloseTimeout: '1m' });

/** The authorizer runs as a local activity: a decision per call (or one for the policy it returns). */
export const { authorizeCall } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '5s',
  retry: { maximumAttempts: 3, initialInterval: 100, nonRetryableErrorTypes: ['Policy.Invalid'] },
});
