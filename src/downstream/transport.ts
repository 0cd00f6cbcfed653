/**
 * What the dispatch activity needs of a tool's downstream, whatever reaches it: one send, one lookup (or seal), and
 * the key retention in force. Three methods that never throw: every outcome is a value (`SendOutcome`,
 * `LookupAnswer`), so the one recovery table (src/domain/recovery.ts) decides what follows, never the transport.
 *
 * The transports: Ledgerloop's HTTP contract (contract-transport.ts), a function the worker runs
 * (function-transport.ts), a third-party HTTP API (http-transport.ts); the worker resolves a tool's declaration to
 * one of them (transports.ts).
 */
import type { Json } from '../domain/canonical';
import type { ToolIntent } from '../domain/operation-key';
import type { LookupAnswer } from '../domain/recovery';
import type { AnyTool } from '../domain/tool';
import type { SendOutcome } from './classify';

export type { LookupAnswer } from '../domain/recovery';
export type { SendOutcome } from './classify';

/** One attempt of one call, as a transport sends it. */
export interface AttemptCall {
  readonly tool: AnyTool;
  readonly intent: ToolIntent;
  /** The canonical arguments: exactly what was hashed into `intent.argumentsHash` (and authorized). */
  readonly body: Json;
  /** The key this attempt sends (the operation key, under the runtime's strategies). */
  readonly key: string;
  /** Temporal's attempt number (1 for the first). */
  readonly attempt: number;
  /** This attempt's ownership epoch (src/domain/fence.ts). */
  readonly fence: number;
  /** When the intent was first recorded (ISO 8601): the same for every attempt. */
  readonly intentAt: string;
  /** Aborted when the attempt is cancelled or reaches its deadline. */
  readonly signal: AbortSignal;
  /** The attempt's absolute deadline (ms): its start-to-close timeout, within the run's deadline. */
  readonly deadlineAtMs: number;
  /** The capability signed for exactly this attempt (sent to a Ledgerloop service only). */
  readonly capability?: string;
}

/** One lookup (or seal) of one call's key. */
export interface LookupCall {
  readonly tool: AnyTool;
  readonly intent: ToolIntent;
  /** The key the call sent. */
  readonly key: string;
  /** The canonical arguments, when the lookup request needs a field of them. */
  readonly body?: Json;
  /** Seal a missing key (only a downstream that seals can). */
  readonly seal: boolean;
  readonly signal?: AbortSignal;
  /** A capability for exactly this lookup or seal (a Ledgerloop service checks it). */
  readonly capability?: string;
}

/** The retention in force for the key: what the declaration says, or what the service declares; or why unknown. */
export type Retention = { readonly ms: number } | { readonly unreadable: string };

export interface Transport {
  send(call: AttemptCall): Promise<SendOutcome>;
  lookup(call: LookupCall): Promise<LookupAnswer>;
  retention(): Promise<Retention>;
}

/** A declared retention (or none), as a transport reports it. */
export function declaredRetention(ms: number | undefined): Retention {
  return ms !== undefined && Number.isFinite(ms) && ms > 0
    ? { ms }
    : { unreadable: 'the declaration names no positive key retention' };
}

/** The error text of anything thrown, bounded (never a payload or a secret: callers pass errors, not bodies). */
export function reasonOf(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.slice(0, 300);
}
