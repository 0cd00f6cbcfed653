/** One attempt of one call, as a transport test sends it: the intent derived from the tool, body and ids given. */
import { hashCanonical, type Json } from '../../src/domain/canonical';
import type { AnyTool } from '../../src/domain/tool';
import type { AttemptCall } from '../../src/downstream/transport';

export interface AttemptIds {
  readonly runId: string;
  readonly providerCallId: string;
  readonly logicalCallId: string;
  /** The operation key, and the key this attempt sends. */
  readonly key: string;
}

/** An attempt of `tool` with `body` for user:alice of tenant acme, its deadline 5 s away, with `over` applied. */
export function attemptCall(tool: AnyTool, body: Json, ids: AttemptIds, over: Partial<AttemptCall> = {}): AttemptCall {
  return {
    tool,
    intent: {
      runId: ids.runId,
      providerCallId: ids.providerCallId,
      logicalCallId: ids.logicalCallId,
      operationKey: ids.key,
      toolName: tool.name,
      toolVersion: tool.version,
      argumentsHash: hashCanonical(body),
      principalId: 'user:alice',
      tenant: 'acme',
      policyVersion: 'p/1',
      deadlineAt: new Date(Date.now() + 60_000).toISOString(),
    },
    body,
    key: ids.key,
    attempt: 1,
    fence: 1,
    intentAt: new Date().toISOString(),
    signal: new AbortController().signal,
    deadlineAtMs: Date.now() + 5_000,
    ...over,
  };
}
