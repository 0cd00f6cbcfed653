/**
 * Reading V8 .cpuprofile files (node --cpu-prof writes one per thread): self time by category and by function,
 * and inclusive time of named functions (a sample counts once for a function however deep it recurses).
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}
interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
  readonly children?: readonly number[];
}
interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfileSummary {
  readonly file: string;
  /** Thread wall time covered by the profile, ms. */
  readonly spanMs: number;
  /** Non-idle sampled time, ms. */
  readonly busyMs: number;
  readonly byCategory: Readonly<Record<string, number>>;
  readonly topSelf: readonly { readonly fn: string; readonly ms: number }[];
  readonly inclusive: Readonly<Record<string, number>>;
  readonly isWorkflowThread: boolean;
}

function shortUrl(url: string): string {
  const m = /node_modules\/(.+)$/.exec(url);
  if (m) return m[1]!;
  const repo = url.replace(/^file:\/\//, '').replace(/^.*\/work\/[^/]+\//, '');
  return repo.length > 60 ? `…${repo.slice(-60)}` : repo;
}

export function fnKey(f: CallFrame): string {
  return `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
}

export function category(f: CallFrame, bundleName: string): string {
  const { url, functionName } = f;
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName === '(program)') return 'program (native/VM)';
  if (url.includes(bundleName) || url.startsWith('workflow-bundle')) return 'workflow bundle';
  if (url.includes('protobufjs') || url.includes('@temporalio/proto')) return 'protobuf';
  if (url.includes('@temporalio/')) return 'temporal sdk';
  if (url.includes('undici') || url.startsWith('node:internal/deps/undici')) return 'http client (undici)';
  if (url.includes('node_modules/tsx') || url.includes('esbuild')) return 'tsx loader';
  if (url.includes('zod')) return 'zod';
  if (url.includes('node_modules/')) return 'other packages';
  if (/\/(activities|src|bench)\//.test(url)) return 'ledgerloop activities';
  if (url.startsWith('node:') || url === '') return 'node internals';
  return 'other';
}

export interface AnalyzeOptions {
  readonly bundleName: string;
  readonly inclusiveNames: readonly string[];
  readonly top?: number;
  /** Only samples taken in [fromUs, toUs] of the monotonic clock (process.hrtime in µs) count. */
  readonly window?: { readonly fromUs: number; readonly toUs: number };
}

export function analyzeProfile(file: string, opts: AnalyzeOptions): ProfileSummary {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const p = opts.window ? windowed(raw, opts.window.fromUs, opts.window.toUs) : raw;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i + 1] ?? 0)));
  const byCategory: Record<string, number> = {};
  const byFn = new Map<string, number>();
  let busy = 0;
  let isWorkflowThread = false;
  for (const n of p.nodes) {
    if (n.callFrame.functionName === 'agentRun' || n.callFrame.functionName === 'bareLoop') isWorkflowThread = true;
    const us = self.get(n.id) ?? 0;
    if (us === 0) continue;
    const cat = category(n.callFrame, opts.bundleName);
    byCategory[cat] = (byCategory[cat] ?? 0) + us / 1000;
    if (cat !== 'idle') {
      busy += us / 1000;
      const key = fnKey(n.callFrame);
      byFn.set(key, (byFn.get(key) ?? 0) + us / 1000);
    }
  }
  const wanted = new Set(opts.inclusiveNames);
  const inclusive: Record<string, number> = {};
  const stackNames = new Map<number, readonly string[]>();
  const namesOf = (id: number): readonly string[] => {
    const cached = stackNames.get(id);
    if (cached) return cached;
    const names = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const fn = byId.get(cur)?.callFrame.functionName;
      if (fn && wanted.has(fn)) names.add(fn);
    }
    const list = [...names];
    stackNames.set(id, list);
    return list;
  };
  p.samples.forEach((id, i) => {
    const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
    for (const name of namesOf(id)) inclusive[name] = (inclusive[name] ?? 0) + dt;
  });
  const round1 = (x: number): number => Math.round(x * 10) / 10;
  return {
    file,
    spanMs: round1((p.endTime - p.startTime) / 1000),
    busyMs: round1(busy),
    byCategory: Object.fromEntries(
      Object.entries(byCategory)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, round1(v)]),
    ),
    topSelf: [...byFn.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, opts.top ?? 25)
      .map(([fn, ms]) => ({ fn, ms: round1(ms) })),
    inclusive: Object.fromEntries(
      Object.entries(inclusive)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, round1(v)]),
    ),
    isWorkflowThread,
  };
}

/** The profile restricted to samples in [fromUs, toUs]; time deltas of dropped samples are dropped with them. */
function windowed(p: CpuProfile, fromUs: number, toUs: number): CpuProfile {
  const samples: number[] = [];
  const deltas: number[] = [0];
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    // Keep the sample with the delta that follows it (the convention analyzeProfile reads).
    if (t >= fromUs && t <= toUs) {
      samples.push(p.samples[i]!);
      deltas.push(p.timeDeltas[i + 1] ?? 0);
    }
  }
  return {
    ...p,
    startTime: Math.max(p.startTime, fromUs),
    endTime: Math.min(p.endTime, toUs),
    samples,
    timeDeltas: deltas,
  };
}
