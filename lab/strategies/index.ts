/**
 * The lab's strategies, installed in this process as this module loads, and the workflow module that installs
 * them in a bundle (`writeWorkflowBundle(file, { interceptorModules: [LAB_STRATEGY_WORKFLOW_MODULE] })`).
 */
import { packageModule } from '../../src/package-paths';

export { ASSUMED_FAILED, BLIND_RETRY, blindRetryKey, isLabStrategy, LAB_STRATEGIES } from './workflows/naive';

export const LAB_STRATEGY_WORKFLOW_MODULE = packageModule('lab', 'strategies', 'workflows', 'module');
