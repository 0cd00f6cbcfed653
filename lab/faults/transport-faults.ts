/**
 * The fault protocol's points for any transport, installed from outside the product through the worker's
 * `wrapTransport` hook: for a function tool the fault wraps the team's function (its `execute` is the commit), for
 * an HTTP API it wraps the request (a loopback proxy, host/testing/http-fault-proxy.ts, does the same on the wire).
 *
 * | point          | kinds                         | what happens                                                     |
 * |----------------|-------------------------------|------------------------------------------------------------------|
 * | `before_send`  | `delay`, `kill`, `error`      | before the function runs (or the request leaves): nothing is sent |
 * | `after_commit` | `drop_response`, `delay`, `kill` | the function returned (the downstream answered): the answer is lost, late, or the worker dies holding it |
 *
 * A worker process reads its plan from LEDGERLOOP_TRANSPORT_FAULTS (a JSON array of `TransportFault`); `kill` is a
 * real SIGKILL of the process, announced first on stdout as one JSON line.
 */
import { writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AnyTool } from '../../src/domain/tool';
import type { Transport } from '../../src/downstream/transport';

export const TRANSPORT_FAULTS_ENV = 'LEDGERLOOP_TRANSPORT_FAULTS';

export interface TransportFault {
  readonly at: 'before_send' | 'after_commit';
  readonly do: 'drop_response' | 'delay' | 'kill' | 'error';
  /** Only this tool's sends; default every tool. */
  readonly tool?: string;
  /** The n-th send through the point (1 = the first). Default 1. */
  readonly occurrence?: number;
  /** How many sends from `occurrence` on. Default 1. */
  readonly times?: number;
  /** `delay`: how long. Default 2,000. */
  readonly ms?: number;
}

/** What a worker writes to stdout when a transport fault fires (one JSON object per line). */
export interface TransportFaultLine {
  readonly transportFault: TransportFault['at'];
  readonly do: TransportFault['do'];
  readonly tool: string;
  readonly hit: number;
  readonly pid: number;
}

export class TransportFaultPlanError extends Error {
  override readonly name = 'TransportFaults.Invalid';
}

const POINT_KINDS: Readonly<Record<TransportFault['at'], readonly TransportFault['do'][]>> = {
  before_send: ['delay', 'kill', 'error'],
  after_commit: ['drop_response', 'delay', 'kill'],
};

/** Parses a plan (the env form is JSON); throws `TransportFaultPlanError` naming the bad entry. */
export function parseTransportFaults(text: string | undefined): TransportFault[] {
  if (text === undefined || text.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new TransportFaultPlanError(`${TRANSPORT_FAULTS_ENV} is not JSON`);
  }
  if (!Array.isArray(parsed)) throw new TransportFaultPlanError(`${TRANSPORT_FAULTS_ENV} is not an array`);
  return parsed.map((f: Partial<TransportFault>, i) => {
    const kinds = f?.at !== undefined ? POINT_KINDS[f.at] : undefined;
    if (kinds === undefined) throw new TransportFaultPlanError(`fault ${i}: at must be before_send or after_commit`);
    if (f.do === undefined || !kinds.includes(f.do))
      throw new TransportFaultPlanError(`fault ${i}: ${f.at} takes ${kinds.join(', ')}`);
    for (const n of ['occurrence', 'times', 'ms'] as const)
      if (f[n] !== undefined && !(Number.isInteger(f[n]) && (f[n] as number) >= (n === 'ms' ? 0 : 1)))
        throw new TransportFaultPlanError(`fault ${i}: ${n} must be a positive integer`);
    return f as TransportFault;
  });
}

/** Whether fault `f` applies to the `hit`-th send of `tool` through its point. */
function applies(f: TransportFault, tool: string, hit: number): boolean {
  const first = f.occurrence ?? 1;
  return (f.tool === undefined || f.tool === tool) && hit >= first && hit < first + (f.times ?? 1);
}

/**
 * A `wrapTransport` for the worker that injects `faults` around every send. Lookups and the retention pass
 * untouched: reconciliation must see the downstream as it is. `kill` defaults to a real SIGKILL of this process.
 */
export function faultyTransports(
  faults: readonly TransportFault[],
  opts: { readonly kill?: () => void; readonly announce?: (line: TransportFaultLine) => void } = {},
): (tool: AnyTool, inner: Transport) => Transport {
  const hits = new Map<string, number>();
  const announce = opts.announce ?? ((line) => writeSync(1, `${JSON.stringify(line)}\n`));
  const kill = opts.kill ?? (() => process.kill(process.pid, 'SIGKILL'));
  const fire = async (at: TransportFault['at'], tool: string): Promise<TransportFault | undefined> => {
    const key = `${at} ${tool}`;
    const hit = (hits.get(key) ?? 0) + 1;
    hits.set(key, hit);
    const fault = faults.find((f) => f.at === at && applies(f, tool, hit));
    if (fault === undefined) return undefined;
    announce({ transportFault: at, do: fault.do, tool, hit, pid: process.pid });
    if (fault.do === 'delay') await sleep(fault.ms ?? 2_000);
    if (fault.do === 'kill') {
      kill();
      await new Promise<never>(() => undefined);
    }
    return fault;
  };
  return (tool, inner) => ({
    async send(call) {
      const before = await fire('before_send', tool.name);
      if (before?.do === 'error') return { kind: 'unavailable', reason: 'fault: refused before sending' };
      const sent = await inner.send(call);
      if (sent.kind !== 'ok' && sent.kind !== 'rejected') return sent;
      const after = await fire('after_commit', tool.name);
      if (after?.do === 'drop_response')
        return { kind: 'response_lost', reason: 'fault: the response was lost after the commit' };
      return sent;
    },
    lookup: (call) => inner.lookup(call),
    retention: () => inner.retention(),
  });
}
