/**
 * The runner's side of the faults: what it does to real processes while a case's run is in flight. Each driver
 * waits for its moment, acts, records the act in the timeline, and returns; none of them measures anything.
 *
 *   - a downstream fault is armed on the service (`POST /admin/faults`); `kill` there holds the request and
 *     SIGKILLs the worker waiting on it once the service's own counts show the request (or the commit);
 *   - `restart_server` holds a committed response, then SIGKILLs the Temporal server and restarts it;
 *   - `pause` waits for the worker's own SIGSTOP, lets a fresh worker retry, then sends SIGCONT;
 *   - `tool.in_flight` holds a request on the wire (net-hold.ts) and delivers it late;
 *   - the approver (approver.ts) decides pending approvals, and `publish_policy` rewrites the policy file first.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { ledgerQuery, requestCancelUpdate } from '../../workflows/definitions';
import type { FaultRule } from '../../src/downstream/protocol';
import type { DevServer } from '../../host/server/dev-server';
import { CRASH_POINTS, type InProcessPoint } from './catalog';
import type { CaseServices, ServerLink } from './lab';
import type { LedgerWatch } from './ledger-watch';
import type { PlannedCase, PlannedFault } from './plan';
import type { Timeline } from './timeline';
import type { NetHold } from './net-hold';
import { POINT_TRIGGERS } from './protocol-format';
import { pause, until, withDeadline } from './waits';
import type { WorkerPool } from './worker-pool';

export interface DriverContext {
  readonly pc: PlannedCase;
  readonly link: ServerLink;
  readonly handle: WorkflowHandle;
  readonly services: CaseServices;
  readonly pool: WorkerPool;
  readonly timeline: Timeline;
  readonly ledger: LedgerWatch;
  readonly policyFile?: string;
  /** A fresh token for the lab's approver (role `approver`, the case's tenant). */
  /** A token of the lab approver to approve (or deny) `call` of this run. */
  readonly approverToken: (call: string) => Promise<string>;
  /** A token of the run's own principal to cancel this run (the verified requestCancel update). */
  readonly cancelToken: () => Promise<string>;
  /** Aborted when the run has ended (or the case gave up). */
  readonly done: AbortSignal;
  /** Set by the server-restart driver: the restarted server, which the case must stop. */
  onServerRestarted?(server: DevServer): void;
}

/** The FaultRule a downstream fault arms on its service. */
export function faultRuleOf(f: PlannedFault): FaultRule {
  if (f.at === 'downstream.seal')
    return {
      at: 'seal',
      do: 'refuse_seal',
      occurrence: f.occurrence,
      times: f.times,
      ...(f.path !== undefined ? { path: f.path } : {}),
    };
  const at = f.at === 'downstream.before_commit' ? 'before_commit' : 'after_commit';
  const holds = f.do === 'kill' || f.do === 'restart_server' || f.do === 'restart_downstream';
  const action = holds ? 'delay' : (f.do as FaultRule['do']);
  return {
    at,
    do: action,
    occurrence: f.occurrence,
    times: f.times,
    ...(action === 'delay' ? { ms: f.ms } : {}),
    ...(f.path !== undefined ? { path: f.path } : {}),
  };
}

/** Arms every downstream-held fault of the case before its run starts; returns each one's rule id, by fault. */
export async function armDownstream(
  ctx: Pick<DriverContext, 'pc' | 'services' | 'timeline'>,
): Promise<Map<PlannedFault, string>> {
  const ids = new Map<PlannedFault, string>();
  for (const f of ctx.pc.faults) {
    const site = CRASH_POINTS[f.at].site;
    if (site !== 'downstream' && site !== 'server') continue;
    // A function's or an HTTP API's fault is injected in the worker or a proxy; a restart holds at the service.
    // An MCP tool's, all of them, by the harness in front of its server (a restart kills the server there).
    if (f.via === 'mcp' || (f.via !== undefined && f.via !== 'service' && f.do !== 'restart_downstream')) continue;
    const svc = ctx.services.byName.get(f.service);
    if (!svc)
      throw new Error(
        `case "${ctx.pc.name}": fault at ${f.at} names service ${f.service}, which the case does not run`,
      );
    const rule = faultRuleOf(f);
    const { id } = await svc.client.armFault(rule);
    ids.set(f, id);
    ctx.timeline.push({ kind: 'fault_armed', point: f.at, text: `armed on ${f.service}: ${JSON.stringify(rule)}` });
  }
  return ids;
}

/**
 * `kill` on a tool whose answer something in front of its downstream holds (the HTTP proxy, the MCP harness): once
 * `held()` says it holds the answer, SIGKILL every live worker waiting on it and record the fault. `holder` names
 * what holds it, for the kill's reason and the timeline.
 */
export async function killWhenHeld(
  ctx: DriverContext,
  f: PlannedFault,
  held: () => boolean,
  holder: { readonly who: string; readonly answered: string },
): Promise<void> {
  if ((await until(async () => (held() ? true : undefined), ctx.done, 60_000, 50)) !== true) return;
  await ctx.ledger.freezeNow();
  const victims = ctx.pool.live();
  for (const w of victims)
    await ctx.pool.kill(w, `${holder.who} in front of ${f.service} holds the answer to ${f.tool}`);
  ctx.timeline.push({
    kind: 'fault_fired',
    point: f.at,
    action: 'kill',
    ...(f.tool !== undefined ? { tool: f.tool } : {}),
    text: `${f.at}: killed ${victims.length} worker(s) waiting on ${f.tool} (${holder.answered}; ${holder.who} holds it)`,
  });
}

/** Whether the service's own counts show the `occurrence`-th request (or, `committed`, effect) within 60 s. */
export async function waitForRequest(ctx: DriverContext, f: PlannedFault, committed: boolean): Promise<boolean> {
  const svc = ctx.services.byName.get(f.service)!;
  const seen = await until(
    async () => {
      const s = await svc.client.stats('', { prefix: true });
      return (committed ? s.businessEffectCount : s.dispatchCount) >= f.occurrence ? true : undefined;
    },
    ctx.done,
    60_000,
    100,
  );
  return seen === true;
}

/** `kill` at a downstream point: once the held request is there (or committed), SIGKILL the worker waiting on it. */
export async function downstreamKill(ctx: DriverContext, f: PlannedFault): Promise<void> {
  if (!(await waitForRequest(ctx, f, f.at === 'downstream.after_commit'))) return;
  await ctx.ledger.freezeNow();
  const victims = ctx.pool.live();
  for (const w of victims) await ctx.pool.kill(w, `${f.service} holds the request at ${f.at}`);
  ctx.timeline.push({
    kind: 'fault_fired',
    point: f.at,
    action: 'kill',
    text: `${f.at}: killed ${victims.length} worker(s) waiting on ${f.service}`,
  });
}

/** `restart_server` at server.mid_run: SIGKILL the Temporal server while a committed response is held, restart it. */
export async function serverRestart(ctx: DriverContext, f: PlannedFault): Promise<void> {
  if (!(await waitForRequest(ctx, f, true))) return;
  await ctx.ledger.freezeNow();
  const server = ctx.link.server;
  if (server.external) throw new Error('restart_server needs a dev server the runner started');
  const started = Date.now();
  ctx.timeline.push({
    kind: 'note',
    text: `SIGKILL the Temporal server (pid ${server.pid}) while ${f.service} holds a committed response`,
  });
  const restarted = await server.restart({ signal: 'SIGKILL' });
  ctx.onServerRestarted?.(restarted);
  ctx.timeline.push({
    kind: 'server_restarted',
    point: f.at,
    text: `Temporal server back on ${restarted.address} (same database) after ${Date.now() - started} ms, pid ${restarted.pid}`,
  });
  ctx.timeline.push({ kind: 'fault_fired', point: f.at, action: 'restart_server', text: 'server restarted mid-run' });
}

type History = temporal.api.history.v1.IHistory;

/** Whether another worker than `identity` closed a dispatch attempt (activity points) or a workflow task. */
function closedElsewhere(history: History, identity: string, workflowPoint: boolean): boolean {
  return (history.events ?? []).some((e) => {
    if (workflowPoint)
      return !!e.workflowTaskCompletedEventAttributes && e.workflowTaskCompletedEventAttributes.identity !== identity;
    const done = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes;
    return !!done && done.identity !== identity;
  });
}

/** `pause`: after the worker stopped itself, wait for the retry elsewhere to close, then SIGCONT it. */
export async function pauseAndResume(ctx: DriverContext, f: PlannedFault): Promise<void> {
  const paused = await ctx.timeline.waitFor(
    (e) => e.kind === 'crash_point' && e.point === f.at && e.action === 'pause' && e.hit === f.occurrence,
    600_000,
    ctx.done,
  );
  if (!paused || paused.pid === undefined) return;
  const w = ctx.pool.byPid(paused.pid);
  if (!w) return;
  ctx.timeline.push({
    kind: 'fault_fired',
    point: f.at,
    action: 'pause',
    text: `worker ${paused.pid} stopped at ${f.at}`,
  });
  const workflowPoint = CRASH_POINTS[f.at].site === 'workflow';
  const retried = await until(
    async () => (closedElsewhere(await ctx.handle.fetchHistory(), w.proc.identity, workflowPoint) ? true : undefined),
    ctx.done,
    f.ms,
    300,
  );
  await ctx.pool.resume(
    w,
    retried
      ? `its ${workflowPoint ? 'workflow task' : 'attempt'} was retried and closed on another worker`
      : 'hold time over',
  );
  // Let the stale attempt finish what it was doing (its request reaches the downstream, whose fence decides).
  const next = f.at.endsWith('before_send') ? f.at.replace('before_send', 'after_response') : undefined;
  if (next)
    await ctx.timeline.waitFor((e) => e.kind === 'crash_point_hit' && e.pid === paused.pid && e.point === next, 15_000);
  else await sleep(1_000);
}

/**
 * `tool.in_flight`: the network hold has the n-th request. `pause`: SIGSTOP the worker that sent it, wait until a
 * retry closed on another worker, deliver the held request late (its fence is now stale), then SIGCONT. `delay`:
 * deliver it after `ms`.
 */
export async function inFlightHold(ctx: DriverContext, f: PlannedFault, hold: NetHold): Promise<void> {
  const held = await Promise.race([
    hold.held.then(() => true),
    new Promise<false>((r) => ctx.done.addEventListener('abort', () => r(false))),
  ]);
  if (!held) return;
  ctx.timeline.push({
    kind: 'fault_fired',
    point: f.at,
    action: f.do,
    text: `the ${f.service} request (hit ${f.occurrence}) is on the wire, held before the service`,
  });
  if (f.do === 'delay') {
    await sleep(f.ms);
    const answer = await hold.release();
    ctx.timeline.push({
      kind: 'note',
      text: `delivered the held request after ${f.ms} ms: ${answer?.status ?? 'no answer'} ${answer?.body.slice(0, 120) ?? ''}`,
    });
    return;
  }
  await ctx.ledger.freezeNow();
  const senders = ctx.pool.live();
  for (const w of senders) await ctx.pool.pause(w, 'its request is held on the wire');
  const identities = new Set(senders.map((w) => w.proc.identity));
  await until(
    async () => {
      const history = await ctx.handle.fetchHistory();
      return [...identities].every((id) => closedElsewhere(history, id, false)) ? true : undefined;
    },
    ctx.done,
    f.ms,
    300,
  );
  const answer = await hold.release();
  ctx.timeline.push({
    kind: 'note',
    text: `delivered the stale request late: ${answer?.status ?? 'no answer'} ${answer?.body.slice(0, 160) ?? ''}`,
  });
  for (const w of senders) await ctx.pool.resume(w, 'its held request has been delivered');
  await sleep(1_000);
}

/**
 * Waits until the run's ledger has recorded its `f.occurrence`-th event of type `f.after` (counted by sequence
 * number, so events before a continue-as-new count too), then `f.ms` more, and runs `act`. Nothing when the run
 * ended first. At an in-process point the first worker holds there until `act` is done (then it is released).
 */
async function atTrigger(ctx: DriverContext, f: PlannedFault, act: () => Promise<void>): Promise<void> {
  if (f.after !== undefined && POINT_TRIGGERS.includes(f.after)) {
    // The first worker announces the hold (TRIGGER_HOLD_MS at most): act while it holds, then release it.
    const held = await ctx.timeline.waitFor(
      (e) => e.kind === 'crash_point' && e.point === f.after && e.hit === f.occurrence,
      600_000,
      ctx.done,
    );
    if (!held) return;
    try {
      if (f.ms > 0) await pause(f.ms, ctx.done);
      if (!ctx.done.aborted) await act();
    } finally {
      if (held.pid !== undefined) ctx.pool.release(held.pid, f.after as InProcessPoint, f.occurrence);
    }
    return;
  }
  if (await ledgerTrigger(ctx, f)) await act();
}

/** The ledger-event trigger of `atTrigger`: true once reached (and the run still open), false when it ended. */
async function ledgerTrigger(ctx: DriverContext, f: PlannedFault): Promise<boolean> {
  const seen = new Set<number>();
  const reached = await until(
    async () => {
      if (!(await runOpen(ctx))) return false;
      try {
        const snap = await withDeadline(ctx.link, 2_000, () => ctx.handle.query(ledgerQuery));
        for (const e of snap.events) if (e.type === f.after) seen.add(e.seq);
      } catch {
        return undefined; // no worker right now
      }
      return seen.size >= f.occurrence ? true : undefined;
    },
    ctx.done,
    600_000,
    150,
  );
  if (reached !== true) return false;
  if (f.ms > 0) await pause(f.ms, ctx.done);
  return !ctx.done.aborted && (await runOpen(ctx));
}

async function runOpen(ctx: DriverContext): Promise<boolean> {
  try {
    const d = await withDeadline(ctx.link, 3_000, () => ctx.handle.describe());
    return d.status.name === 'RUNNING';
  } catch {
    return true; // the server may be restarting: assume open, the act itself will tell
  }
}

/** `cancel` / `temporal_cancel` at run.cancel: once the trigger event is in the ledger, cancel the run. */
export function cancelRun(ctx: DriverContext, f: PlannedFault): Promise<void> {
  return atTrigger(ctx, f, () => cancelNow(ctx, f));
}

async function cancelNow(ctx: DriverContext, f: PlannedFault): Promise<void> {
  const where = `after ${f.after} #${f.occurrence}${f.ms > 0 ? ` + ${f.ms} ms` : ''}`;
  try {
    if (f.do === 'cancel') {
      const token = await ctx.cancelToken();
      await withDeadline(ctx.link, 10_000, () =>
        ctx.handle.executeUpdate(requestCancelUpdate, { args: [{ token, reason: `fault protocol: cancel ${where}` }] }),
      );
    } else {
      await withDeadline(ctx.link, 10_000, () => ctx.handle.cancel());
    }
  } catch (err) {
    ctx.timeline.push({ kind: 'note', text: `${f.do} ${where} was refused: ${(err as Error).message.slice(0, 200)}` });
    return;
  }
  ctx.timeline.push({
    kind: 'fault_fired',
    point: f.at,
    action: f.do,
    text: `${f.do === 'cancel' ? 'verified requestCancel accepted' : 'Temporal cancel requested'} ${where}`,
  });
}

/** The junk a run must survive: every one must be refused (an update) or ignored (a signal), none may poison it. */
export const JUNK_UPDATES: readonly { readonly name: string; readonly args: [unknown, ...unknown[]] }[] = [
  { name: 'decideApproval', args: [{ logicalCallId: 42, decision: 'maybe', token: 'not-a-jws' }] },
  { name: 'decideApproval', args: ['\u0000junk'] },
  { name: 'resolveCall', args: [{ logicalCallId: 'lc_nope', outcome: 'SUCCEEDED', token: 'x', reason: '' }] },
  { name: 'requestCancel', args: [{ reason: 'x'.repeat(5_000) }] },
  { name: 'ledgerloopNoSuchUpdate', args: [[1, 2, 3]] },
];
export const JUNK_SIGNALS: readonly { readonly name: string; readonly args: unknown[] }[] = [
  { name: 'ledgerloopNoSuchSignal', args: [{ junk: true }] },
  { name: 'decideApproval', args: [{ logicalCallId: 'lc_1_a', decision: 'approve' }] },
  { name: 'requestCancel', args: [null] },
];

/** `junk_signal` / `junk_update` at run.message: once the trigger event is in the ledger, send the junk. */
export function sendJunk(ctx: DriverContext, f: PlannedFault): Promise<void> {
  return atTrigger(ctx, f, () => junkNow(ctx, f));
}

async function junkNow(ctx: DriverContext, f: PlannedFault): Promise<void> {
  let delivered = 0;
  const accepted: string[] = [];
  if (f.do === 'junk_signal') {
    for (const j of JUNK_SIGNALS) {
      try {
        await withDeadline(ctx.link, 5_000, () => ctx.handle.signal(j.name, ...j.args));
        delivered += 1;
      } catch {
        /* the run closed meanwhile */
      }
    }
  } else {
    for (const j of JUNK_UPDATES) {
      try {
        await withDeadline(ctx.link, 5_000, () => ctx.handle.executeUpdate(j.name, { args: j.args }));
        delivered += 1;
        accepted.push(j.name);
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError) delivered += 1; // refused by the run: as it must be
      }
    }
  }
  if (accepted.length > 0)
    ctx.timeline.push({ kind: 'note', text: `junk ACCEPTED by the run (a defect): ${accepted.join(', ')}` });
  if (delivered === 0) return;
  ctx.timeline.push({
    kind: 'fault_fired',
    point: f.at,
    action: f.do,
    text: `${delivered} junk ${f.do === 'junk_signal' ? 'signal(s) delivered' : 'update(s) refused by the run'} after ${f.after} #${f.occurrence}`,
  });
}
