/**
 * Typed errors of the run commands and the exit codes they map to. Every error the commands raise is one of these,
 * printed as one line `ledgerloop <command>: <message>`:
 *
 *   0  success
 *   1  the operation ran and said no: an audit finding, a replay failure, a refused update, no worker answered
 *   2  bad input: a missing or malformed flag or argument, malformed JSON, an unknown run or call id
 *   3  the Temporal server could not be reached (the message names the address)
 */
import { frontendRefusal } from '../host/client/frontend-refusal';
import {
  isGrpcDeadlineError,
  isGrpcServiceError,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import path from 'node:path';
import { ConfigError } from '../src/config';
import type { ProjectConfig } from '../host/project/config';
import { activeProject } from './active-project';

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_UNREACHABLE = 3;

/** Base class: a message meant for the operator and the exit code the process ends with. */
export class CliError extends Error {
  override readonly name: string = 'CliError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** A missing or malformed flag, argument or input file. */
export class CliUsageError extends CliError {
  override readonly name: string = 'CliUsageError';
  constructor(message: string) {
    super(message, EXIT_USAGE);
  }
}

/** No workflow with this id in the namespace. */
export class RunNotFoundError extends CliUsageError {
  override readonly name = 'RunNotFoundError';
  constructor(
    readonly workflowId: string,
    readonly namespace: string,
  ) {
    super(`unknown run id "${workflowId}": no such workflow in namespace ${namespace}`);
  }
}

/** The run exists but has no call with this logical call id (or none in the state the command needs). */
export class CallNotFoundError extends CliUsageError {
  override readonly name = 'CallNotFoundError';
}

/** The Temporal frontend did not answer at `address`. */
export class ServerUnreachableError extends CliError {
  override readonly name = 'ServerUnreachableError';
  constructor(
    readonly address: string,
    detail: string,
  ) {
    super(
      `cannot reach the Temporal server at ${address} (${detail}); is it running? (--address or TEMPORAL_ADDRESS)`,
      EXIT_UNREACHABLE,
    );
  }
}

/** The server or the workflow refused the operation (an update validator, a closed run). */
export class OperationRefusedError extends CliError {
  override readonly name = 'OperationRefusedError';
  constructor(message: string) {
    super(message, EXIT_FAILED);
  }
}

/**
 * A query or update needs a worker on the run's task queue, and none answered in time (`timeoutMs`), or the
 * server said at once that no worker polls the queue (`timeoutMs` undefined).
 */
export class NoWorkerError extends CliError {
  override readonly name = 'NoWorkerError';
  constructor(what: string, workflowId: string, timeoutMs: number | undefined, taskQueue?: string) {
    const queue = taskQueue ?? "the run's task queue";
    super(
      (timeoutMs === undefined
        ? `no worker polls task queue ${queue}, so nothing can answer the ${what} for ${workflowId}; `
        : `no worker answered the ${what} for ${workflowId} within ${Math.round(timeoutMs / 1000)} s; a worker must poll task queue ${queue}; `) +
        `start one on that queue (${noWorkerHint()})`,
      EXIT_FAILED,
    );
  }
}

/** How to get a worker polling for the built-in demo: said by every message about a missing worker. */
export const NO_WORKER_HINT =
  '`npm start` keeps one polling `ledgerloop`; or `npx ledgerloop worker` with LEDGERLOOP_TASK_QUEUE, docs/cli.md';

/**
 * How to get a worker polling: for a project, the command that starts its worker (it reads the same config);
 * without one, the demo's advice.
 */
export function noWorkerHint(project: ProjectConfig | undefined = activeProject()): string {
  if (project === undefined) return NO_WORKER_HINT;
  const config = path.relative(project.root, project.file);
  const where = path.relative(process.cwd(), project.root);
  // A config under another name is not found by the search: name it.
  const flag = /^ledgerloop\.config\.(mjs|js|cjs|json|ts)$/.test(config) ? '' : ` --config ${config}`;
  return `\`${where === '' ? '' : `cd ${where} && `}npx ledgerloop worker${flag}\` serves this project (${config}: its tools, model and task queue ${project.taskQueue ?? 'ledgerloop'})`;
}

const GRPC_FAILED_PRECONDITION = 9;

/** The server's immediate answer to a query no worker can take: "no poller seen for task queue recently". */
export function isNoPollerError(err: unknown): boolean {
  const cause =
    err instanceof ServiceError && isGrpcServiceError(err.cause)
      ? err.cause
      : isGrpcServiceError(err)
        ? err
        : undefined;
  const text = `${err instanceof Error ? err.message : String(err)} ${cause?.details ?? ''}`;
  return (cause === undefined || cause.code === GRPC_FAILED_PRECONDITION) && /no poller seen/i.test(text);
}

/**
 * A payload the client could not decode because it is encrypted and no key ring was configured: the message
 * gains what to set. Other messages are returned unchanged.
 */
export function withCodecHint(message: string): string {
  if (!/Unknown encoding: binary\/encrypted/i.test(message)) return message;
  return `${message}: the payloads are encrypted; set LEDGERLOOP_CODEC_KEYS, or LEDGERLOOP_CODEC_KEYS_FILE to a file holding the key ring that wrote them (the demo's is .data/codec-demo-keys)`;
}

/** gRPC status codes the mapping looks at. */
const GRPC_DEADLINE_EXCEEDED = 4;
const GRPC_UNAVAILABLE = 14;

/** The gRPC status code of a raw gRPC error or of a ServiceError's cause. */
function grpcCode(err: unknown): number | undefined {
  if (isGrpcServiceError(err)) return err.code;
  if (err instanceof ServiceError && isGrpcServiceError(err.cause)) return err.cause.code;
  return undefined;
}

/** True when the error is a gRPC deadline (our own timeout on a query or update). */
export function isDeadlineExceeded(err: unknown): boolean {
  // An update call cut off by our deadline surfaces as WorkflowUpdateRPCTimeoutOrCancelledError (we never cancel it).
  return (
    isGrpcDeadlineError(err) ||
    grpcCode(err) === GRPC_DEADLINE_EXCEEDED ||
    err instanceof WorkflowUpdateRPCTimeoutOrCancelledError
  );
}

/** True for an error of a gRPC call (whatever its status), as opposed to an error the workflow or SDK raised. */
export function isRpcFailure(err: unknown): boolean {
  return (
    isGrpcServiceError(err) || err instanceof ServiceError || err instanceof WorkflowUpdateRPCTimeoutOrCancelledError
  );
}

/** Context the mapping needs to word its messages. */
export interface ErrorContext {
  readonly address: string;
  readonly namespace: string;
  readonly workflowId?: string;
}

/**
 * Maps an error from the Temporal client to a CliError. CliErrors pass through; anything unrecognized becomes an
 * EXIT_FAILED error carrying the original message.
 */
export function toCliError(err: unknown, ctx: ErrorContext): CliError {
  if (err instanceof CliError) return err;
  if (err instanceof ConfigError) return new CliUsageError(err.message);
  if (err instanceof WorkflowNotFoundError) {
    const id = err.workflowId || ctx.workflowId || '?';
    // An update sent to a closed run comes back as NOT_FOUND "workflow execution already completed".
    if (/already completed/i.test(err.message))
      return new OperationRefusedError(`run ${id} has already closed (${err.message})`);
    return new RunNotFoundError(id, ctx.namespace);
  }
  if (err instanceof WorkflowExecutionAlreadyStartedError) {
    return new CliUsageError(`workflow id "${err.workflowId}" is already in use in namespace ${ctx.namespace}`);
  }
  if (err instanceof WorkflowUpdateFailedError) {
    return new OperationRefusedError(`refused: ${err.cause?.message ?? err.message}`);
  }
  if (grpcCode(err) === GRPC_UNAVAILABLE) return new ServerUnreachableError(ctx.address, (err as Error).message);
  const refusal = frontendRefusal(err);
  if (refusal !== undefined)
    return new OperationRefusedError(
      `the Temporal frontend refused the call: ${refusal} (a token with the right role: --token, or LEDGERLOOP_TEMPORAL_TOKEN_FILE)`,
    );
  const message = withCodecHint(err instanceof Error ? err.message : String(err));
  // A ServiceError's own message is generic ("Failed to query Workflow"): add the server's status and details.
  const cause = err instanceof ServiceError && isGrpcServiceError(err.cause) ? err.cause : undefined;
  return new CliError(cause ? `${message} (gRPC status ${cause.code}: ${cause.details})` : message, EXIT_FAILED);
}
