/**
 * One `tools/call` on a worker's MCP connection, as a value that never throws:
 *
 * | what happened                                                        | outcome      |
 * |----------------------------------------------------------------------|--------------|
 * | the server returned a result                                         | `answered`   |
 * | the server returned a result with `isError: true`, or a JSON-RPC error | `tool_error` |
 * | no answer in time, the connection closed or was cancelled in flight, |              |
 * | an answer that does not read as a result, anything unrecognised      | `unknown`    |
 * | provably nothing left: not connected in time, cancelled before       |              |
 * | sending, refused by the transport before writing (a refused TCP      |              |
 * | connect, an HTTP 4xx the spec says means "not accepted")             | `not_sent`   |
 *
 * `tool_error` says the tool ran and reported an error (or the server refused it): whether anything happened is
 * then the declaration's to say (`onToolError`), never assumed to be nothing. Only `not_sent` proves no effect.
 *
 * Keys travel with the call: the operation key, the arguments hash, the fence and the intent time go in the
 * request's `_meta` under `dev.ledgerloop/operation`, so a server that reads them can deduplicate and refuse a
 * stale fence; a server that does not is governed by the tool's declared contract.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { classifyTransportError } from '../classify';
import type { McpConnection } from './connection';
import type { RequestTrace } from './tracking-transport';

/** The `_meta` key the operation's identity travels under. */
export const OPERATION_META_KEY = 'dev.ledgerloop/operation';

/** What a call tells the server about the intent it belongs to. */
export interface OperationMeta {
  /** The operation key: one business intent. */
  readonly key: string;
  /** SHA-256 of the canonical arguments (tenant included) the key is bound to. */
  readonly argumentsHash: string;
  /** This attempt's fence: a later attempt of the call carries a higher one. */
  readonly fence: number;
  /** When the intent was recorded (ISO 8601), the same for every attempt. */
  readonly intentAt: string;
}

export type McpCallOutcome =
  | { readonly kind: 'answered'; readonly result: CallToolResult }
  | {
      readonly kind: 'tool_error';
      /** The result with `isError: true`, or absent for a JSON-RPC error. */
      readonly result?: CallToolResult;
      readonly error?: { readonly code: number; readonly message: string };
    }
  | { readonly kind: 'unknown'; readonly why: string }
  | { readonly kind: 'not_sent'; readonly why: string };

export interface CallToolRequest {
  /** The tool's name on the server. */
  readonly name: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The operation this call is an attempt of; absent for a lookup, which is a read. */
  readonly operation?: OperationMeta;
  /** How long to wait for the answer; default the connection's call timeout. */
  readonly timeoutMs?: number;
  /** Cancels the wait (the activity's cancellation): in flight, the outcome is unknown. */
  readonly signal?: AbortSignal;
}

/** Calls `req.name` on the connection's server. Never throws. */
export async function callTool(conn: McpConnection, req: CallToolRequest): Promise<McpCallOutcome> {
  try {
    return await call(conn, req);
  } catch (err) {
    return { kind: 'unknown', why: `unrecognised failure: ${String(err).slice(0, 200)}` };
  }
}

async function call(conn: McpConnection, req: CallToolRequest): Promise<McpCallOutcome> {
  const timeoutMs = req.timeoutMs ?? conn.callTimeoutMs;
  const startedAt = Date.now();
  if (req.signal?.aborted) return { kind: 'not_sent', why: 'cancelled before sending' };
  // A server restarting after a crash gets the call's own time to come back; then nothing was sent.
  const session = await conn.ready(timeoutMs, req.signal);
  if (session === undefined)
    return { kind: 'not_sent', why: `${conn.name} is not connected (${conn.state}); nothing was sent` };
  if (req.signal?.aborted) return { kind: 'not_sent', why: 'cancelled before sending' };
  const params = {
    name: req.name,
    arguments: { ...req.arguments },
    ...(req.operation !== undefined ? { _meta: { [OPERATION_META_KEY]: { ...req.operation } } } : {}),
  };
  const trace = session.transport.watch(
    (m) =>
      (m as { method?: unknown; params?: unknown }).method === 'tools/call' &&
      (m as { params?: unknown }).params === params,
  );
  const left = Math.max(1, timeoutMs - (Date.now() - startedAt));
  try {
    const result = await session.client.request({ method: 'tools/call', params }, CallToolResultSchema, {
      timeout: left,
      ...(req.signal !== undefined ? { signal: req.signal } : {}),
    });
    return result.isError === true ? { kind: 'tool_error', result } : { kind: 'answered', result };
  } catch (err) {
    const outcome = failed(trace, err, left);
    if (outcome.kind === 'not_sent' && sessionRefused(err)) conn.sessionLost(session, outcome.why);
    return outcome;
  } finally {
    session.transport.unwatch(trace);
  }
}

/** What a call that threw did, by the trace of its request (never by the error's text alone). */
function failed(trace: RequestTrace, err: unknown, timeoutMs: number): McpCallOutcome {
  if (trace.errorAnswer !== undefined) return { kind: 'tool_error', error: trace.errorAnswer };
  if (!trace.handed) return { kind: 'not_sent', why: `the client refused before sending: ${describe(err)}` };
  if (trace.responded) return { kind: 'unknown', why: `the server answered with something that is not a tool result` };
  if (trace.sendError !== undefined && provablyUnsent(trace.sendError))
    return { kind: 'not_sent', why: `the server did not accept the request: ${describe(trace.sendError)}` };
  const code = (err as { code?: unknown }).code;
  if (code === -32001) return { kind: 'unknown', why: `no answer within ${timeoutMs} ms` };
  if (code === -32000) return { kind: 'unknown', why: 'the connection closed before the answer' };
  return { kind: 'unknown', why: `no answer: ${describe(err)}` };
}

/**
 * A send that failed before the request could reach the server: the stdio process was gone (`Not connected`), the
 * TCP connect was refused, or the HTTP endpoint refused it with a 4xx, which Streamable HTTP defines as "not
 * accepted" (an unknown session, a bad request, no authorization).
 */
function provablyUnsent(err: unknown): boolean {
  if (err instanceof StreamableHTTPError) return typeof err.code === 'number' && err.code >= 400 && err.code < 500;
  if (err instanceof Error && err.message === 'Not connected') return true;
  return classifyTransportError(err).kind === 'unavailable';
}

/** The HTTP session the request went under is gone (404) or unknown to the server (400): open a new one. */
function sessionRefused(err: unknown): boolean {
  return err instanceof StreamableHTTPError && (err.code === 404 || err.code === 400);
}

/** A failure in words that carry no server-written text (an HTTP error's body, a JSON-RPC error's message). */
function describe(err: unknown): string {
  if (err instanceof StreamableHTTPError) return `HTTP ${err.code ?? '?'}`;
  const code = (err as { code?: unknown }).code;
  if (err instanceof Error && err.name === 'McpError') return `MCP error ${String(code)}`;
  return (err instanceof Error ? `${err.name}: ${err.message}` : String(err)).slice(0, 200);
}
