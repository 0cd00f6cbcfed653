/**
 * The worker plugin's own registration of Ledgerloop's search attributes (src/domain/search-attributes.ts) on the
 * namespace it serves: a fresh namespace would otherwise refuse the first run's attributes (INVALID_ARGUMENT).
 * Missing ones are added through the operator service and awaited until listed. Where the connection may not add
 * them (a cloud namespace, an API key without the operator role), or one is registered with another type, the
 * start is refused with `SearchAttributesMissing`, which names the attributes and the command that registers them.
 * A connection that may not even list them (the cluster's `worker:<queue>` role, docs/operations.md) is left as it
 * was: `'unreadable'` is returned for the caller to report, and the deployment's setup owns the attributes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTES, type SearchAttributeDef } from '../../src/domain/search-attributes';
import { INDEXED_VALUE_TYPE } from '../server/dev-server';

type OperatorService = Pick<
  temporal.api.operatorservice.v1.OperatorService,
  'listSearchAttributes' | 'addSearchAttributes'
>;

/** gRPC's PERMISSION_DENIED status code. */
const PERMISSION_DENIED = 7;

/** The namespace lacks search attributes this worker could not register; `message` names the fix. */
export class SearchAttributesMissing extends Error {
  override readonly name = 'Config.SearchAttributesMissing';
  constructor(
    readonly namespace: string,
    readonly missing: readonly SearchAttributeDef[],
    reason: string,
  ) {
    super(
      `namespace ${namespace} lacks the search attributes ${missing.map((s) => s.name).join(', ')} (${reason}); ` +
        `register them once: ${missing
          .map(
            (s) =>
              `temporal operator search-attribute create --namespace ${namespace} --name ${s.name} --type ${s.type}`,
          )
          .join(' && ')}, or call ensureSearchAttributes(address, namespace) from 'ledgerloop/testing'`,
    );
  }
}

async function missingOn(operator: OperatorService, namespace: string): Promise<SearchAttributeDef[]> {
  const res = await operator.listSearchAttributes({ namespace });
  const custom = (res.customAttributes ?? {}) as Record<string, number>;
  const wrongType = SEARCH_ATTRIBUTES.filter(
    (sa) => custom[sa.name] !== undefined && custom[sa.name] !== INDEXED_VALUE_TYPE[sa.type],
  );
  if (wrongType.length > 0) throw new SearchAttributesMissing(namespace, wrongType, 'registered with another type');
  return SEARCH_ATTRIBUTES.filter((sa) => custom[sa.name] === undefined);
}

/**
 * Adds whichever of Ledgerloop's search attributes `namespace` lacks, then waits (up to `timeoutMs`) until all are
 * listed. Refuses with `SearchAttributesMissing` when they cannot be added or do not appear.
 */
export async function registerSearchAttributes(
  operator: OperatorService,
  namespace: string,
  timeoutMs = 30_000,
): Promise<'registered' | 'present' | 'unreadable'> {
  let missing: SearchAttributeDef[];
  try {
    missing = await missingOn(operator, namespace);
  } catch (err) {
    if (err instanceof SearchAttributesMissing || (err as { code?: unknown }).code !== PERMISSION_DENIED) throw err;
    return 'unreadable';
  }
  if (missing.length === 0) return 'present';
  const searchAttributes: Record<string, number> = {};
  for (const sa of missing) searchAttributes[sa.name] = INDEXED_VALUE_TYPE[sa.type];
  try {
    await operator.addSearchAttributes({ namespace, searchAttributes });
  } catch (err) {
    throw new SearchAttributesMissing(
      namespace,
      missing,
      `the operator service refused to add them: ${(err as Error).message}`,
    );
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const still = await missingOn(operator, namespace);
    if (still.length === 0) return 'registered';
    if (Date.now() > deadline) throw new SearchAttributesMissing(namespace, still, `not listed after ${timeoutMs} ms`);
    await sleep(100);
  }
}
