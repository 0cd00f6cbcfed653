/**
 * Typed errors of the run commands and the exit codes they map to. Every error the commands raise is one of these,
 * printed as one line `ledgerloop <command>: <message>`:
 *
 *   0  success
 *   1  the operation ran and said no: an audit finding, a replay failure, a refused update, no worker answered
 *   2  bad input: a missing or malformed flag or argument, malformed JSON, an unknown run or call id
 *   3  the Temporal server could not be reached (the message names the address)
 */
import {
  isGrpcDeadlineError,
  isGrpcServiceError,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';

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

/** A query or update needs a worker on the run's task queue, and none answered in time. */
export class NoWorkerError extends CliError {
  override readonly name = 'NoWorkerError';
  constructor(what: string, workflowId: string, timeoutMs: number, taskQueue?: string) {
    super(
      `no worker answered the ${what} for ${workflowId} within ${Math.round(timeoutMs / 1000)} s; ` +
        `a worker must poll task queue ${taskQueue ?? "the run's task queue"} (ledgerloop worker)`,
      EXIT_FAILED,
    );
  }
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
  const message = err instanceof Error ? err.message : String(err);
  // A ServiceError's own message is generic ("Failed to query Workflow"): add the server's status and details.
  const cause = err instanceof ServiceError && isGrpcServiceError(err.cause) ? err.cause : undefined;
  return new CliError(cause ? `${message} (gRPC status ${cause.code}: ${cause.details})` : message, EXIT_FAILED);
}
