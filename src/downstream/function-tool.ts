/**
 * A function tool's implementation, as a team writes it and gives it to the worker (`functions` of `createWorker`
 * and `LedgerloopPlugin`), joined to its declaration by the tool's name:
 *
 *   export const sendReceipt = implementTool(sendReceiptTool, {
 *     async execute(args, ctx) {
 *       return mailer.send({ to: args.to, ... }, { idempotencyKey: ctx.operationKey, signal: ctx.signal });
 *     },
 *     async lookup(key, ctx) {
 *       const sent = await mailer.findByKey(key, { signal: ctx.signal });
 *       return sent ? found(sent) : notFound();
 *     },
 *   });
 *
 * `execute` runs in the worker, once per attempt the recovery table allows. Whatever it throws after it may have
 * acted leaves the call UNKNOWN (looked up, or left for an operator). Only `NothingSentError` proves nothing was
 * sent: a validation refusal before any request, say, which settles the call FAILED (or, `retryable`, lets
 * Temporal try again).
 */
import type { ToolDefinition } from '../domain/tool';

/** What `execute` and `lookup` are given for one attempt. */
export interface ToolContext {
  /** The key to hand the downstream's idempotency option: the operation key, under the runtime's strategies. */
  readonly operationKey: string;
  /** SHA-256 of the canonical arguments the key is bound to. */
  readonly argumentsHash: string;
  /** Temporal's attempt number of this dispatch (1 for the first). */
  readonly attempt: number;
  /** This attempt's ownership epoch: pass it to a downstream that takes a fence (`promises.fenced`). */
  readonly fence: number;
  /** Aborted when the attempt is cancelled or reaches `deadline`: pass it to every request the function makes. */
  readonly signal: AbortSignal;
  /** The attempt's absolute deadline: nothing may be begun after it. */
  readonly deadline: Date;
  /** The verified principal the run acts for, and its tenant. */
  readonly principal: { readonly id: string; readonly tenant: string };
  readonly tenant: string;
  /** The run (the workflow id) and the logical call. */
  readonly runId: string;
  readonly logicalCallId: string;
  /** The worker secrets the declaration names (`transport.secrets`), from the worker's environment. Not enumerable. */
  readonly secrets: Readonly<Record<string, string>>;
}

/** What a function's `lookup` answers. */
export type FunctionLookup =
  | { readonly kind: 'found'; readonly result: unknown; readonly status: 'completed' | 'failed' | 'in_progress' }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'unknown'; readonly reason: string };

/** The effect exists under the key: `result` is what `execute` would have returned (checked as untrusted data). */
export function found(result: unknown): FunctionLookup {
  return { kind: 'found', result, status: 'completed' };
}

/** A record exists under the key and holds no effect (a bounced send, a declined charge). */
export function foundFailed(result: unknown = null): FunctionLookup {
  return { kind: 'found', result, status: 'failed' };
}

/** A record exists under the key and is still being processed: looked up again later. */
export function pending(): FunctionLookup {
  return { kind: 'found', result: null, status: 'in_progress' };
}

/** Nothing under the key. Proves absence only as the recovery table says (a seal, or the in-flight window). */
export function notFound(): FunctionLookup {
  return { kind: 'not_found' };
}

/** The lookup could not tell (the downstream did not answer, or answered something unreadable). */
export function unknown(reason: string): FunctionLookup {
  return { kind: 'unknown', reason };
}

/**
 * Thrown by `execute` only when nothing was sent: e.g. the arguments fail the SDK's own validation before any
 * request. `code` is recorded (vetted: a dotted code like `Mailer.InvalidAddress`, else `Dispatch.Rejected`);
 * `retryable`: the downstream did not process anything and may later (a client-side rate limit).
 */
export class NothingSentError extends Error {
  override readonly name = 'Tool.NothingSent';
  constructor(
    readonly code: string,
    message: string,
    readonly retryable = false,
  ) {
    super(message);
  }
}

export interface ToolFunction<A = unknown, R = unknown> {
  execute(args: A, ctx: ToolContext): Promise<R>;
  lookup?(key: string, ctx: ToolContext): Promise<FunctionLookup>;
}

/** A function bound to the name of the tool it implements, as the worker takes it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the worker holds implementations of every tool
export interface ToolImplementation extends ToolFunction<any, unknown> {
  readonly tool: string;
}

/** Binds `fn` to `tool`'s name, typed by its declaration: `execute` receives the tool's parsed canonical arguments. */
export function implementTool<A, R>(tool: ToolDefinition<A, R>, fn: ToolFunction<A, R | unknown>): ToolImplementation {
  return { tool: tool.name, execute: fn.execute, ...(fn.lookup ? { lookup: fn.lookup } : {}) };
}
