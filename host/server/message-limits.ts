/**
 * How large a message to a run may be, enforced by the Temporal server before any worker sees it. The dev server
 * gets these values as `--dynamic-config-value` flags (dev-server.ts); the cluster and compose read the same values
 * from deploy/temporal/dynamicconfig/ledgerloop.yaml (test/unit/message-limits.test.ts keeps the two equal).
 *
 * Why the server, and not the worker: an update's payload is checked by no frontend limit in Temporal 1.32 (a
 * signal's and a query's are, against `limit.blobSize.error`), and the worker's SDK sends every update it accepts or
 * rejects back to the server with its original request attached. An update over the 2 MiB blob limit therefore fails
 * the workflow task that answers it, whatever the workflow decides (TMPRL1103, "payloads ... exceeded the error
 * limit"). The history service can refuse it at admission instead: `history.maxInFlightUpdatePayloads` bounds the
 * payload bytes of a run's updates in flight, and one update over it is refused with RESOURCE_EXHAUSTED before it is
 * delivered. docs/operations.md, "Message limits", says what each caller sees.
 */

/**
 * The payload bytes of one run's updates in flight (admitted, not completed), and so of any one update: 256 KiB.
 * An approval, an operator resolution or a cancel request is 1 to 5 KB with its token; 256 KiB stays far below the
 * 2 MiB at which the worker's answer would fail a task, and bounds what one accepted update adds to the history.
 */
export const UPDATE_PAYLOAD_LIMIT_BYTES = 256 * 1024;

/** A signal's input and a query's arguments, checked by the frontend: the server's default, 2 MiB, stated. */
export const MESSAGE_BLOB_LIMIT_BYTES = 2 * 1024 * 1024;

/** The dynamic config keys and values every Ledgerloop Temporal server runs with for message sizes. */
export const MESSAGE_LIMITS_DYNAMIC_CONFIG: Readonly<Record<string, number>> = {
  'history.maxInFlightUpdatePayloads': UPDATE_PAYLOAD_LIMIT_BYTES,
  'limit.blobSize.error': MESSAGE_BLOB_LIMIT_BYTES,
};

/** `--dynamic-config-value KEY=JSON` flags of `temporal server start-dev` for `values`. */
export function dynamicConfigFlags(
  values: Readonly<Record<string, unknown>> = MESSAGE_LIMITS_DYNAMIC_CONFIG,
): string[] {
  return Object.entries(values).flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${JSON.stringify(value)}`,
  ]);
}
