/**
 * A call the Temporal frontend's authorizer refused: gRPC PERMISSION_DENIED, with the authorizer's reason in the
 * status details (lab/cluster/server/authorizer.go names the caller, its roles and the call). Found on a raw gRPC
 * error or on a client error that wraps one.
 */
import { google, temporal } from '@temporalio/proto';

export const GRPC_PERMISSION_DENIED = 7;

interface GrpcLike {
  readonly code?: unknown;
  readonly details?: unknown;
  readonly metadata?: { get(key: string): unknown[] };
  readonly cause?: unknown;
}

/** The authorizer's reason when `err` is (or wraps) a PermissionDenied, else undefined. */
export function frontendRefusal(err: unknown): string | undefined {
  for (let e = err as GrpcLike | undefined; e; e = e.cause as GrpcLike | undefined) {
    if (e.code !== GRPC_PERMISSION_DENIED) continue;
    const bin = e.metadata?.get('grpc-status-details-bin')?.[0];
    if (bin instanceof Uint8Array) {
      try {
        for (const any of google.rpc.Status.decode(bin).details ?? []) {
          if (any.type_url?.endsWith('PermissionDeniedFailure') && any.value) {
            const reason = temporal.api.errordetails.v1.PermissionDeniedFailure.decode(any.value).reason;
            if (reason) return reason;
          }
        }
      } catch {
        // undecodable details: fall back to the status message
      }
    }
    return typeof e.details === 'string' && e.details !== '' ? e.details : 'permission denied';
  }
  return undefined;
}
