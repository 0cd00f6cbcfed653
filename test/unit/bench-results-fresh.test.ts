/**
 * The check behind `npm run bench:fresh` (scripts/check-bench-fresh.ts): lab/bench/results/latest.md records the
 * runtime's tree digest (lab/bench/lib/provenance.ts), and the check is red when HEAD's runtime is another. Whether
 * today's latest.md is fresh is not asserted here (a full run needs a quiet machine; docs/performance.md); these
 * tests show the check can fail and can pass.
 */
import { parseProvenance, provenanceLine, stalenessReasons, type Provenance } from '../../lab/bench/lib/provenance';

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
