/**
 * The run's activities, proxied once. Every call site passes its own options (`executeWithOptions`): timeouts
 * derived from the run deadline, a summary for the UI. The base timeout here is always overridden.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';

export const activities = proxyActivities<Activities>({ startToCloseTimeout: '1m' });
