/** The bench's command line (lab/bench/main.ts says what each flag does): parsed strictly, refused with a FlagError. */
import { FlagError, FlagRefusal, parseFlags } from '../../src/flags';
import type { BenchTarget } from './lib/stack';

export const SECTIONS = [
  'latency',
  'throughput',
  'quota',
  'history',
  'replay',
  'memory',
  'retries',
  'attribution',
  'profile',
] as const;
/** What the cluster target measures by default: what the server and the number of workers change. */
export const CLUSTER_SECTIONS: readonly Section[] = ['latency', 'throughput', 'quota'];
/**
 * Sections run only when named in --only: `model` installs the local model first (about 830 MB); `console` loads
 * an inbox of 1,000 pending approvals (about 5 minutes).
 */
export const OPTIONAL_SECTIONS = ['model', 'console'] as const;
export type Section = (typeof SECTIONS)[number] | (typeof OPTIONAL_SECTIONS)[number];

export interface BenchArgs {
  readonly quick: boolean;
  readonly longRun: boolean;
  readonly only: ReadonlySet<Section>;
  readonly dbOnDisk: boolean;
  readonly target: BenchTarget;
  /** Worker hosts per throughput cell; each value is a full throughput pass. */
  readonly hosts: readonly number[];
}

const OPTIONS = {
  quick: { type: 'boolean' },
  'long-run': { type: 'boolean' },
  'db-on-disk': { type: 'boolean' },
  target: { type: 'string' },
  only: { type: 'string' },
  hosts: { type: 'string' },
} as const;

export function parseBenchArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): BenchArgs {
  const v = parseFlags(argv, OPTIONS);
  const target = v.target ?? 'dev';
  if (target !== 'dev' && target !== 'cluster')
    throw new FlagError(FlagRefusal.Invalid, `--target must be dev or cluster, not ${target}`);
  // The cluster target measures what the server changes: latency, throughput and the quota's ceiling (replay and
  // history are the worker's and the workflow's, the same on any server).
  const only = new Set<Section>(
    v.only ? (v.only.split(',') as Section[]) : target === 'cluster' ? CLUSTER_SECTIONS : SECTIONS,
  );
  const known: readonly Section[] = [...SECTIONS, ...OPTIONAL_SECTIONS];
  for (const s of only)
    if (!known.includes(s))
      throw new FlagError(FlagRefusal.Invalid, `unknown section ${s}; known: ${known.join(', ')}`);
  const hosts = (v.hosts ?? (target === 'cluster' ? '1,2,3' : '1')).split(',').map(Number);
  for (const h of hosts)
    if (!Number.isSafeInteger(h) || h < 1 || h > 8)
      throw new FlagError(FlagRefusal.Invalid, `--hosts takes whole numbers from 1 to 8, not ${h}`);
  return {
    quick: v.quick === true,
    longRun: v['long-run'] === true,
    only,
    dbOnDisk: v['db-on-disk'] === true || env.BENCH_DB_ON_DISK === '1',
    target,
    hosts,
  };
}
