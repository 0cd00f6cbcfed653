/**
 * The runner's acts for faults that name a tool not on Ledgerloop's contract (lab/faults/tool-targets.ts): a
 * loopback proxy in front of each HTTP API a case's tools call, armed with the case's faults, and the kill of the
 * worker waiting on an answer the proxy holds; and, for any transport, the restart of a downstream process while
 * it holds a request at the point.
 */
import { startFaultProxy, type FaultProxy } from '../../host/testing/http-fault-proxy';
import { killWhenHeld, waitForRequest, type DriverContext } from './drivers';
import type { PlannedCase, PlannedFault } from './plan';
import { proxyFaultOf, type ToolPoint } from './tool-targets';

/** The case's proxies by service, and each proxied fault's index among its proxy's rules. */
export interface CaseProxies {
  readonly byService: ReadonlyMap<string, FaultProxy>;
  readonly rule: ReadonlyMap<PlannedFault, { readonly proxy: FaultProxy; readonly index: number }>;
  close(): Promise<void>;
}

/** A proxy in front of each service an HTTP tool's fault names (at `urls[service]`), armed with those faults. */
export async function startCaseProxies(pc: PlannedCase, urls: Readonly<Record<string, string>>): Promise<CaseProxies> {
  const byService = new Map<string, FaultProxy>();
  const rule = new Map<PlannedFault, { proxy: FaultProxy; index: number }>();
  const counts = new Map<FaultProxy, number>();
  const close = async (): Promise<void> => {
    await Promise.all([...byService.values()].map((p) => p.close().catch(() => undefined)));
  };
  try {
    for (const f of pc.faults) {
      if (f.via !== 'proxy' || f.do === 'restart_downstream') continue;
      const target = urls[f.service];
      if (target === undefined)
        throw new Error(`case "${pc.name}": ${f.tool} calls ${f.service}, which the case does not run`);
      let proxy = byService.get(f.service);
      if (proxy === undefined) {
        proxy = await startFaultProxy(target);
        byService.set(f.service, proxy);
      }
      proxy.arm(proxyFaultOf({ ...f, at: f.at as ToolPoint, tool: f.tool! }, f.method ?? 'POST', f.path));
      const index = counts.get(proxy) ?? 0;
      counts.set(proxy, index + 1);
      rule.set(f, { proxy, index });
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { byService, rule, close };
}

/** Whether the proxy acted on the fault's request. */
export function proxyFired(proxies: CaseProxies, f: PlannedFault): boolean {
  const r = proxies.rule.get(f);
  return r !== undefined && (r.proxy.fired()[r.index] ?? 0) > 0;
}

/** `kill` on an HTTP tool: once the proxy holds the API's answer (or request), SIGKILL the workers waiting on it. */
export async function proxyKill(ctx: DriverContext, proxies: CaseProxies, f: PlannedFault): Promise<void> {
  await killWhenHeld(ctx, f, () => proxyFired(proxies, f), { who: 'the proxy', answered: 'the API answered' });
}

/**
 * `restart_downstream`: the service holds the request at the point (armed as a delay); once its own counts show
 * the request (before commit) or the effect (after commit), SIGKILL its process and start it again on the same
 * port and database. The request in hand gets no answer; the caller's retry meets the restarted process.
 */
export async function downstreamRestart(ctx: DriverContext, f: PlannedFault): Promise<void> {
  if (!(await waitForRequest(ctx, f, f.at === 'downstream.after_commit'))) return;
  const svc = ctx.services.byName.get(f.service)!;
  const pid = svc.proc.pid;
  const exited = new Promise<void>((resolve) => {
    if (svc.proc.child.exitCode !== null || svc.proc.child.signalCode !== null) resolve();
    else svc.proc.child.once('exit', () => resolve());
  });
  svc.proc.child.kill('SIGKILL');
  await exited;
  const started = Date.now();
  const again = await ctx.services.restart(f.service);
  ctx.timeline.push({
    kind: 'fault_fired',
    point: f.at,
    action: 'restart_downstream',
    ...(f.tool !== undefined ? { tool: f.tool } : {}),
    text: `${f.at}: SIGKILLed ${f.service} (pid ${pid}) holding the request; back on ${again.proc.url} (same database) in ${Date.now() - started} ms, pid ${again.proc.pid}`,
  });
}
