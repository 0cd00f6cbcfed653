/**
 * The tool-definition API. One declaration per tool: argument and result schemas, the canonical form that is
 * hashed and sent downstream, the effect it protects, its idempotency contract and its authorization mapping.
 *
 * Declarations are pure data and pure functions: the workflow validates, canonicalizes and authorizes with them
 * inside the deterministic sandbox; activities use the same declaration to dispatch.
 */
import type { z } from 'zod';
import type { Json } from './canonical';
import type { ToolTransport } from './transport';

/** How a downstream contract lets us recover after a lost response. */
export type IdempotencyContract =
  /** The downstream deduplicates the same key with the same arguments: a same-key retry is safe. */
  | 'idempotent_by_key'
  /** The downstream can be asked by key whether the effect exists, but a retry is not deduplicated. */
  | 'reconcilable_by_lookup'
  /** Neither: a lost response can only be settled by an operator. */
  | 'none';

export interface DispatchContext {
  readonly tenant: string;
  readonly principalId: string;
}

/** What authorization needs to know about one call, derived from its canonical arguments. */
export interface AuthorizationRequest {
  readonly action: string;
  /** A tenant-scoped resource id, `tenant/kind/id`. */
  readonly resource: string;
  readonly resourceTenant: string;
  /** The amount at stake, in minor units, when the call moves money. */
  readonly amountMinor?: number;
  readonly currency?: string;
}

/** What the forward call's compensation can know: its arguments, its key, and its receipt when one is known. */
export interface ForwardCall<A> {
  readonly args: A;
  readonly operationKey: string;
  readonly receipt?: string;
}

/**
 * How an effect is offset. A compensation is a new governed effect (own key, fresh authorization, deadline,
 * reconciliation), never a rollback. Its arguments must be computable before the forward call is dispatched,
 * so a forward effect whose outcome is UNKNOWN is still covered: refer to the forward effect by its key.
 */
export type Compensation<A> =
  | { readonly kind: 'compensate'; readonly tool: string; args(forward: ForwardCall<A>): unknown }
  /** No honest compensation exists (an email was read): such tools need prevention or approval before dispatch. */
  | { readonly kind: 'irreversible' }
  /** Nothing to offset (a read, or itself a compensation). */
  | { readonly kind: 'none' };

export interface ToolDefinition<A = unknown, R = unknown> {
  /** Stable name the model sees, e.g. `wallet_debit`. */
  readonly name: string;
  /** Bumped when the canonical form or the downstream contract changes; part of the operation key. */
  readonly version: number;
  readonly description: string;
  readonly args: z.ZodType<A>;
  readonly result: z.ZodType<R>;
  /** Largest accepted argument JSON, in bytes, checked before parsing the schema. */
  readonly maxArgumentBytes: number;
  /** Largest accepted result JSON, in bytes. */
  readonly maxResultBytes: number;
  /**
   * The downstream's name: the worker's `services[<name>]` base URL (for a Ledgerloop service or an HTTP API), the
   * circuit breaker's key and what the ledger records as the call's service.
   */
  readonly service: string;
  /** The mutating route of a service on Ledgerloop's HTTP contract (the default transport), e.g. `/v1/debits`. */
  readonly route?: string;
  /**
   * How the worker reaches the downstream when it is not a Ledgerloop service: a function the worker runs, or a
   * third-party HTTP API (src/domain/transport.ts). Default: Ledgerloop's HTTP contract at `route`. What the
   * transport's downstream promises decides what happens after a lost response (src/domain/recovery.ts).
   */
  readonly transport?: ToolTransport;
  /** The effect the operation key protects, e.g. `wallet.charge`. */
  readonly effectScope: string;
  readonly idempotency: IdempotencyContract;
  /**
   * The argument that tells deliberate repeats of an otherwise identical effect apart (a memo, an order line,
   * an invoice number). The operation key names the business intent: the same tool and canonical arguments give
   * the same key for the life of a run, so a re-proposal gets the earlier outcome and no second effect. A tool
   * whose users mean to repeat an identical effect names this field, and the model must vary it.
   */
  readonly intentReference?: string;
  /** The canonical arguments: explicit units, tenant-scoped ids, sorted sets, zoned times, no secrets. */
  canonicalize(args: A, ctx: DispatchContext): Json;
  authorization(args: A, ctx: DispatchContext): AuthorizationRequest;
  readonly compensation: Compensation<A>;
  /**
   * For a compensating tool: the downstream reasons that mean "the forward effect never existed" (the
   * downstream also sealed the forward key). A forward call left UNKNOWN is then settled as no effect.
   */
  readonly forwardAbsentReasons?: readonly string[];
  /** Business invariants beyond the schema: a reason the call can never be valid, or null. */
  invariants?(args: A, ctx: DispatchContext): string | null;
  /** When a human must approve this exact call before dispatch: the reason, or null when no approval is needed. */
  approval?(args: A, ctx: DispatchContext): string | null;
  /** One line for the Temporal UI's activity summary. */
  summary(args: A): string;
  /** The fields of a validated result that the next planning step may see. Everything else stays out. */
  promote(result: R): Json;
}

/** Identity helper that keeps the declaration's generic types. */
export function defineTool<A, R>(def: ToolDefinition<A, R>): ToolDefinition<A, R> {
  return def;
}

export type AnyTool = ToolDefinition<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
