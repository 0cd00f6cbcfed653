/**
 * Whether lab/bench/results/latest.md measured the runtime HEAD holds (`npm run bench:fresh`). It records the
 * runtime's tree digest (lab/bench/lib/provenance.ts); a change to src/, host/, workflows/ or activities/ without a
 * new full `npm run bench` makes this exit 1 with the reasons. It is not part of `npm test`: a full run needs a quiet
 * machine, and a red suite for a figure no one could measure yet would hide every other failure. Run it before
 * quoting a figure from latest.md (docs/performance.md).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../host/worker/bundle';
import { headRuntimeTree, parseProvenance, stalenessReasons } from '../lab/bench/lib/provenance';

const latest = path.join(REPO_ROOT, 'lab', 'bench', 'results', 'latest.md');
const reasons = stalenessReasons(parseProvenance(readFileSync(latest, 'utf8')), headRuntimeTree());
if (reasons.length === 0) {
  console.log('bench:fresh: latest.md measured the runtime HEAD holds');
} else {
  for (const r of reasons) console.error(`bench:fresh: ${r}`);
  console.error(
    'bench:fresh: run a full `npm run bench` on a quiet machine and commit lab/bench/results/latest.{json,md}',
  );
  process.exitCode = 1;
}
