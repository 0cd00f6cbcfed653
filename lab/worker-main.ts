/**
 * The lab's worker process: the product's worker (host/worker/main.ts) with the fault lab's crash points plugged in
 * from outside when the lab configures them (LEDGERLOOP_CRASH_AT, or LEDGERLOOP_CRASH_POINTS=1 for every worker
 * of a fault run), and a project's MCP servers behind the fault harness when LEDGERLOOP_MCP_FAULTS names them.
 * `spawnWorker` starts this entry; `ledgerloop worker` and the compose image start the product's.
 */
import { exitOnWorkerError, runWorkerProcess } from '../host/worker/main';
import { crashPointsFromEnv, crashPointWorkerOptions } from './faults/crash-points';
import { mcpHarnessWrapFromEnv } from './faults/mcp-harness-wrap';
import { scriptedModelsFromEnv } from './scenarios';
import './strategies'; // the naive loop, installed for this process's dispatch (the lab's bundle carries it too)

const wrapMcpServer = mcpHarnessWrapFromEnv(process.env);
runWorkerProcess(
  {
    models: scriptedModelsFromEnv(process.env),
    ...(crashPointsFromEnv(process.env) ? crashPointWorkerOptions(process.env) : {}),
  },
  wrapMcpServer ? { wrapMcpServer } : {},
).catch(exitOnWorkerError);
