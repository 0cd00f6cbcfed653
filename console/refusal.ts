/**
 * Every answer the console gives to an action that did not happen: an HTTP status, a stable type and a message the
 * person can act on. A refusal by the run (an update's validator or handler) or by a console action workflow is
 * shown as the workflow typed it (`Actor.Forbidden`, `Approval.Invalid`, `Operator.ResolutionRefused`, ...); the
 * console's own refusals are `Console.*`.
 */
import {
  isGrpcDeadlineError,
  isGrpcServiceError,
  WorkflowFailedError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/common';

export interface Refusal {
  readonly status: 400 | 401 | 403 | 404 | 409 | 422 | 500 | 503 | 504;
  readonly type: string;
  readonly message: string;
}

export const ConsoleRefusal = {
  SignInRequired: 'Console.SignInRequired',
  OriginRefused: 'Console.OriginRefused',
  HostRefused: 'Console.HostRefused',
  CsrfInvalid: 'Console.CsrfInvalid',
  InputInvalid: 'Console.InputInvalid',
  NotInTenant: 'Console.NotInTenant',
  NoWorker: 'Console.NoWorker',
  RunClosed: 'Run.Closed',
  RunNotFound: 'Run.NotFound',
  Busy: 'Console.Busy',
  TemporalDenied: 'Temporal.PermissionDenied',
  /** No token could be had for the act (no token exchange configured): nothing was sent. */
  ActTokenUnavailable: 'Console.ActTokenUnavailable',
  Failed: 'Console.Error',
} as const;

export function refusal(status: Refusal['status'], type: string, message: string): Refusal {
  return { status, type, message };
}

/** A failure a workflow typed: its type and message, whatever wraps it (an activity, an update, a run). */
function typedCause(err: unknown): ApplicationFailure | undefined {
  let e: unknown = err;
  for (let i = 0; i < 5 && e instanceof Error; i++) {
    if (e instanceof ApplicationFailure && e.type) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

const GRPC = { NOT_FOUND: 5, ALREADY_EXISTS: 6, PERMISSION_DENIED: 7, FAILED_PRECONDITION: 9, UNAUTHENTICATED: 16 };

/** The refusal an error from a Temporal call stands for. */
export function refusalOf(err: unknown): Refusal {
  if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowFailedError) {
    const typed = typedCause(err);
    if (typed) return refusal(422, typed.type!, typed.message);
    return refusal(422, 'Workflow.Failed', (err.cause ?? err).message);
  }
  if (err instanceof WorkflowNotFoundError)
    return refusal(404, ConsoleRefusal.RunNotFound, 'no such run in this namespace');
  if (err instanceof WorkflowExecutionAlreadyStartedError)
    return refusal(409, ConsoleRefusal.Busy, 'the same action on this call is still running; try again when it ends');
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isGrpcDeadlineError(err))
    return refusal(
      504,
      ConsoleRefusal.NoWorker,
      'no worker answered in time: is a worker polling the run’s task queue?',
    );
  if (isGrpcServiceError(err)) {
    if (err.code === GRPC.NOT_FOUND && /completed|closed/i.test(err.details ?? err.message))
      return refusal(409, ConsoleRefusal.RunClosed, 'the run has closed: it takes no more updates');
    if (err.code === GRPC.NOT_FOUND) return refusal(404, ConsoleRefusal.RunNotFound, 'no such run in this namespace');
    if (err.code === GRPC.PERMISSION_DENIED || err.code === GRPC.UNAUTHENTICATED)
      return refusal(
        403,
        ConsoleRefusal.TemporalDenied,
        `the Temporal frontend refused: ${err.details ?? err.message}`,
      );
  }
  const typed = typedCause(err);
  if (typed) return refusal(422, typed.type!, typed.message);
  const message = err instanceof Error ? err.message : String(err);
  if (/already completed|workflow execution.*closed/i.test(message))
    return refusal(409, ConsoleRefusal.RunClosed, 'the run has closed: it takes no more updates');
  return refusal(500, ConsoleRefusal.Failed, message.slice(0, 500));
}
