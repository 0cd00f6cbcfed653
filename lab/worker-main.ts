/**
 * The lab's worker process: the product's worker (src/worker/main.ts) with the fault lab's crash points plugged in
 * from outside when the lab configures them (LEDGERLOOP_CRASH_AT, or LEDGERLOOP_CRASH_POINTS=1 for every worker
 * of a fault run). `spawnWorker` starts this entry; `ledgerloop worker` and the compose image start the product's.
 */
import { exitOnWorkerError, runWorkerProcess } from '../src/worker/main';
import { crashPointInstrumentation, crashPointsFromEnv } from './faults/crash-points';

runWorkerProcess(crashPointsFromEnv(process.env) ? { instrument: crashPointInstrumentation(process.env) } : {}).catch(
  exitOnWorkerError,
);
