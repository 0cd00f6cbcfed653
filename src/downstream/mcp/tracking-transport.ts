/**
 * The evidence a call's outcome rests on: whether its request was handed to the connection, whether writing it
 * failed before anything left, and whether the server answered it. The SDK's client reports a timeout, a closed
 * connection and a server's error answer alike as a thrown `McpError`; this wrapper of its transport sees the
 * messages themselves, so `callTool` says `not_sent` only where provably nothing was sent, and `tool_error` only
 * where the server answered.
 */
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** What the connection knows of one tracked request. */
export interface RequestTrace {
  /** The request was handed to the underlying transport (it may have been written). */
  handed: boolean;
  /** Writing it failed, with this error, before the transport reported it sent. */
  sendError?: unknown;
  /** The server answered this request (a result or an error). */
  responded?: boolean;
  /** The server's error answer (a JSON-RPC error response to this request). */
  errorAnswer?: { readonly code: number; readonly message: string };
}

type MessageHandler = NonNullable<Transport['onmessage']>;

function idOf(message: JSONRPCMessage): string | number | undefined {
  const id = (message as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** A transport that traces the requests `match` picks (by the message the client sends). */
export class TrackingTransport implements Transport {
  private readonly byId = new Map<string | number, RequestTrace>();
  private readonly pending: { readonly match: (m: JSONRPCMessage) => boolean; readonly trace: RequestTrace }[] = [];
  private handler: MessageHandler | undefined;

  constructor(readonly inner: Transport) {
    inner.onmessage = ((message: JSONRPCMessage, extra?: unknown) => {
      const id = idOf(message);
      const error = (message as { error?: { code?: unknown; message?: unknown } }).error;
      const trace = id === undefined ? undefined : this.byId.get(id);
      if (trace !== undefined && error !== undefined && 'id' in message && !('method' in message)) {
        trace.errorAnswer = {
          code: typeof error.code === 'number' ? error.code : 0,
          message: typeof error.message === 'string' ? error.message : '',
        };
      }
      if (trace !== undefined && !('method' in message)) {
        trace.responded = true;
        this.byId.delete(id as string | number);
      }
      (this.handler as ((m: JSONRPCMessage, e?: unknown) => void) | undefined)?.(message, extra);
    }) as MessageHandler;
  }

  get onmessage(): MessageHandler | undefined {
    return this.handler;
  }
  set onmessage(handler: MessageHandler | undefined) {
    this.handler = handler;
  }
  get onclose(): Transport['onclose'] {
    return this.inner.onclose;
  }
  set onclose(handler: Transport['onclose']) {
    this.inner.onclose = handler;
  }
  get onerror(): Transport['onerror'] {
    return this.inner.onerror;
  }
  set onerror(handler: Transport['onerror']) {
    this.inner.onerror = handler;
  }
  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }
  get setProtocolVersion(): Transport['setProtocolVersion'] {
    return this.inner.setProtocolVersion?.bind(this.inner);
  }

  /** Trace the next request `match` picks; the trace fills in as it is sent and answered. */
  watch(match: (message: JSONRPCMessage) => boolean): RequestTrace {
    const trace: RequestTrace = { handed: false };
    this.pending.push({ match, trace });
    return trace;
  }

  /** Stop tracing (the call is over). */
  unwatch(trace: RequestTrace): void {
    const at = this.pending.findIndex((p) => p.trace === trace);
    if (at >= 0) this.pending.splice(at, 1);
    for (const [id, t] of this.byId) if (t === trace) this.byId.delete(id);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const at = 'method' in message ? this.pending.findIndex((p) => p.match(message)) : -1;
    const trace = at >= 0 ? this.pending.splice(at, 1)[0]!.trace : undefined;
    const id = idOf(message);
    if (trace !== undefined && id !== undefined) this.byId.set(id, trace);
    if (trace !== undefined) trace.handed = true;
    try {
      await this.inner.send(message, options);
    } catch (err) {
      if (trace !== undefined) trace.sendError = err;
      throw err;
    }
  }
}
