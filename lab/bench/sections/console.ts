/**
 * The operator console's figures, measured through its HTTP API as the page uses it (a session signed in with a
 * one-time code): how long after a run records `ApprovalRequested` the approval reaches the live inbox stream
 * (SSE), with an otherwise empty inbox and again with 1,000 approvals pending; and how long `GET /api/inbox`
 * takes with 1,000 pending items, cold (every run queried) and warm (the runs' details reused).
 */
import { DEV_ISSUER_KEY_ENV, tokenForAct } from '../../../src/identity/act-token';
import type { WorkflowHandle } from '@temporalio/client';
import { startConsole } from '../../../console/server';
import { forgetInboxDetails, listWaitingRuns } from '../../../console/inbox';
import { mapLimit } from '../../../console/call-facts';
import { staticIdentitySource } from '../../../src/identity/config';
import { startAgentRun, readLedger } from '../../../host/client/runs';
import { StaticPolicyStore } from '../../../src/stores/policy-store';
import { builtinTools } from '../../../src/tools/registry';
import { account, PRINCIPAL, TENANT } from '../lib/stack';
import { summarize, type Summary } from '../lib/stats';
import { startWorkers } from '../lib/workers';
import { DEFAULT_TUNING, type BenchContext } from './common';

export interface ConsoleFigures {
  /** ms from the ledger's ApprovalRequested to the stream event that first lists it, inbox otherwise empty. */
  readonly toInboxEmpty: Summary;
  /** The same with `pending` approvals waiting. */
  readonly toInboxLoaded: Summary;
  readonly pending: number;
  /** GET /api/inbox with `pending` items: the first (every run queried), then repeated (details reused). */
  readonly loadColdMs: number;
  readonly loadWarm: Summary;
  readonly itemsListed: number;
  /** Of a load: the visibility list of the `pending` runs alone (the console's own search, as the person). */
  readonly visibilityList: Summary;
  readonly refreshMs: number;
}

interface Stream {
  /** Resolves with the arrival time of the first event whose items include a key starting with `prefix`. */
  seen(prefix: string): Promise<number>;
  close(): void;
}

function openStream(url: string, cookie: string): Stream {
  const abort = new AbortController();
  const waiting: { prefix: string; resolve: (t: number) => void }[] = [];
  void (async () => {
    const res = await fetch(url, { headers: { cookie }, signal: abort.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block.split('\n').find((l) => l.startsWith('data:'));
        if (!data) continue;
        const at = Date.now();
        const keys = (JSON.parse(data.slice(5)) as { items: { key: string }[] }).items.map((i) => i.key);
        for (const w of [...waiting]) {
          if (keys.some((k) => k.startsWith(w.prefix))) {
            waiting.splice(waiting.indexOf(w), 1);
            w.resolve(at);
          }
        }
      }
    }
  })().catch(() => undefined);
  return { seen: (prefix) => new Promise((resolve) => waiting.push({ prefix, resolve })), close: () => abort.abort() };
}

export async function measureConsole(ctx: BenchContext): Promise<ConsoleFigures> {
  const { stack } = ctx;
  const refreshMs = 1_000;
  const workers = await startWorkers(ctx, 'console', DEFAULT_TUNING, ['governed'] as const);
  const tq = workers.tq('governed');
  const running = await startConsole(
    {
      temporal: { client: stack.client, connection: stack.connection, namespace: stack.server.namespace },
      issuers: staticIdentitySource([stack.identity.config]),
      policies: new StaticPolicyStore(),
      tools: builtinTools,
      viewerRoles: ['viewer'],
      refreshMs,
      // carol's approvals from the console, each with a token for its one call, minted by the stack's issuer.
      actTokens: (session, scope) =>
        tokenForAct(session, scope, { [DEV_ISSUER_KEY_ENV]: stack.identity.keyPath }).then((r) => r.token),
    },
    { host: '127.0.0.1', port: 0 },
  );
  const carol = await stack.identity.issue('manager:carol', TENANT, ['approver'], { ttlSec: 3600 });
  const signIn = await fetch(running.signInLink(carol), { redirect: 'manual' });
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
  const handles: WorkflowHandle[] = [];
  const start = async (i: number): Promise<WorkflowHandle> => {
    const h = await startAgentRun(stack.client, {
      workflowId: `bench-console-${ctx.stamp}-${i}`,
      taskQueue: tq,
      input: {
        principal: { id: PRINCIPAL, tenant: TENANT },
        goal: 'bench: a debit that waits for approval',
        strategy: 'same_key_replay',
        planner: {
          kind: 'scripted',
          scenario: 'wallet-debit',
          vars: { account: account(i), amount: { minor: 60_000, currency: 'EUR' } },
        },
        deadlineAt: new Date(Date.now() + 60 * 60_000).toISOString(),
      },
      identityToken: (run) => stack.identity.issueFor({ purpose: 'start', run }, PRINCIPAL, TENANT),
    });
    handles.push(h);
    return h;
  };
  const latency = async (samples: number, offset: number): Promise<number[]> => {
    const stream = openStream(`${running.url}/api/inbox/stream`, cookie);
    const out: number[] = [];
    try {
      for (let i = 0; i < samples; i++) {
        const h = await start(offset + i);
        const arrived = await stream.seen(`approval/${h.workflowId}/`);
        const requested = (await readLedger(h)).events.find((e) => e.type === 'ApprovalRequested')!.at;
        out.push(arrived - Date.parse(requested));
      }
    } finally {
      stream.close();
    }
    return out;
  };
  try {
    const samples = ctx.quick ? 5 : 10;
    const pending = ctx.quick ? 200 : 1_000;
    ctx.log(`console: approval → inbox, ${samples} samples with an empty inbox`);
    const empty = await latency(samples, 0);
    ctx.log(`console: starting ${pending} runs that wait for approval`);
    await mapLimit(
      Array.from({ length: pending - handles.length }, (_, i) => i + 10_000),
      32,
      (i) => start(i),
    );
    const query = `WorkflowType = 'agentRun' AND LedgerloopTenant = '${TENANT}' AND LedgerloopPendingApprovals > 0 AND ExecutionStatus = 'Running'`;
    for (let t = Date.now(); (await stack.client.workflow.count(query)).count < pending;) {
      if (Date.now() - t > 600_000) throw new Error(`fewer than ${pending} approvals pending after 10 min`);
      await new Promise((r) => setTimeout(r, 1_000));
    }
    forgetInboxDetails();
    const get = async (): Promise<{ ms: number; items: number }> => {
      const t0 = Date.now();
      const res = await fetch(`${running.url}/api/inbox`, { headers: { cookie } });
      const body = (await res.json()) as { items: unknown[] };
      return { ms: Date.now() - t0, items: body.items.length };
    };
    const cold = await get();
    const warm = [];
    for (let i = 0; i < 5; i++) warm.push((await get()).ms);
    const lists: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = Date.now();
      await listWaitingRuns(running.deps, carol, TENANT);
      lists.push(Date.now() - t0);
    }
    ctx.log(
      `console: inbox of ${cold.items} items: cold ${cold.ms} ms, warm ${warm.join('/')} ms; visibility list ${lists.join('/')} ms`,
    );
    const loaded = await latency(ctx.quick ? 3 : 5, 20_000);
    return {
      toInboxEmpty: summarize(empty),
      toInboxLoaded: summarize(loaded),
      pending,
      loadColdMs: cold.ms,
      loadWarm: summarize(warm),
      itemsListed: cold.items,
      visibilityList: summarize(lists),
      refreshMs,
    };
  } finally {
    await mapLimit(handles, 32, (h) => h.terminate('bench done').catch(() => undefined));
    await running.close();
    await workers.stop();
  }
}
