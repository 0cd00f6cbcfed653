/**
 * lab/bench/results/latest.md is the source of every figure in the docs: it must be of the runtime HEAD holds. It
 * records the runtime's tree digest (lab/bench/lib/provenance.ts); a change to src/, host/, workflows/ or
 * activities/ without a new full run (`npm run bench`, then commit latest.md and latest.json) fails the first test
 * here (docs/performance.md says what to do when it is red). The others show the check can fail and can pass.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../../host/worker/bundle';
import {
  headRuntimeTree,
  parseProvenance,
  provenanceLine,
  stalenessReasons,
  type Provenance,
} from '../../lab/bench/lib/provenance';

const LATEST = path.join(REPO_ROOT, 'lab', 'bench', 'results', 'latest.md');

test('latest.md is of the runtime HEAD holds (a full `npm run bench` rewrites it)', () => {
  const recorded = parseProvenance(readFileSync(LATEST, 'utf8'));
  expect(stalenessReasons(recorded, headRuntimeTree())).toEqual([]);
});

describe('the freshness check itself', () => {
  const p: Provenance = {
    commit: 'a'.repeat(40),
    runtimeCommit: 'b'.repeat(40),
    runtimeTree: '0123456789abcdef',
    runtimeDirty: false,
  };

  it('reads back the line a run writes, and calls it fresh for the same tree', () => {
    const md = `# Benchmark figures\n\n${provenanceLine(p)}\n\n| table |\n`;
    expect(parseProvenance(md)).toEqual(p);
    expect(stalenessReasons(parseProvenance(md), p.runtimeTree)).toEqual([]);
  });

  it('is red for another tree, for uncommitted runtime code, and for a file that records no source', () => {
    expect(stalenessReasons(p, 'fedcba9876543210')).toEqual([expect.stringContaining('the runtime changed')]);
    const dirty = parseProvenance(provenanceLine({ ...p, runtimeDirty: true }));
    expect(stalenessReasons(dirty, p.runtimeTree)).toEqual([expect.stringContaining('uncommitted changes')]);
    expect(stalenessReasons(parseProvenance('# Benchmark figures\n\n| old |\n'), p.runtimeTree)).toEqual([
      expect.stringContaining('records no source'),
    ]);
  });
});
