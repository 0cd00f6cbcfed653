/**
 * What code a benchmark run measured, as `latest.md` records it, and whether the runtime has changed since.
 *
 * The runtime is what the figures are of: src/, host/, workflows/, activities/. A run records the commit it ran at,
 * the last commit that changed the runtime, and a digest of the runtime's trees at that commit (`git ls-tree`:
 * content-addressed, so it survives a rebase, needs no history beyond HEAD, and is the same in a shallow clone),
 * and whether the runtime had uncommitted changes. test/unit/bench-results-fresh.test.ts compares the digest
 * recorded in latest.md with HEAD's: a runtime change without a new full run fails it (docs/performance.md).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { REPO_ROOT } from '../../../host/worker/bundle';

/** The folders whose change makes the figures stale. */
export const RUNTIME_PATHS = ['src', 'host', 'workflows', 'activities'] as const;

export interface Provenance {
  /** HEAD when the run started. */
  readonly commit: string;
  /** The last commit that changed a runtime folder. */
  readonly runtimeCommit: string;
  /** SHA-256 (first 16 hex) of `git ls-tree HEAD -- <runtime folders>`. */
  readonly runtimeTree: string;
  /** The runtime folders had uncommitted changes: the figures are of code no commit holds. */
  readonly runtimeDirty: boolean;
}

function git(args: readonly string[], cwd: string): string {
  return execFileSync('git', [...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The digest of the runtime's trees in `lsTree` (the output of `git ls-tree <commit> -- <runtime folders>`). */
export function runtimeTreeDigest(lsTree: string): string {
  return createHash('sha256').update(lsTree.trim()).digest('hex').slice(0, 16);
}

/** The runtime's trees at HEAD, digested. Throws when `cwd` is not a git checkout. */
export function headRuntimeTree(cwd: string = REPO_ROOT): string {
  return runtimeTreeDigest(git(['ls-tree', 'HEAD', '--', ...RUNTIME_PATHS], cwd));
}

export function provenance(cwd: string = REPO_ROOT): Provenance {
  return {
    commit: git(['rev-parse', 'HEAD'], cwd),
    runtimeCommit: git(['log', '-1', '--format=%H', '--', ...RUNTIME_PATHS], cwd),
    runtimeTree: headRuntimeTree(cwd),
    runtimeDirty: git(['status', '--porcelain', '--', ...RUNTIME_PATHS], cwd) !== '',
  };
}

const LINE =
  /^Source: commit ([0-9a-f]{7,40}); runtime \(([^)]*)\) tree ([0-9a-f]{16}), last changed in ([0-9a-f]{7,40})(, with uncommitted changes)?\.$/m;

/** The line `latest.md` carries under its title. */
export function provenanceLine(p: Provenance): string {
  return (
    `Source: commit ${p.commit}; runtime (${RUNTIME_PATHS.join(', ')}) tree ${p.runtimeTree}, ` +
    `last changed in ${p.runtimeCommit}${p.runtimeDirty ? ', with uncommitted changes' : ''}.`
  );
}

/** The provenance a `latest.md` records, or undefined when it records none. */
export function parseProvenance(markdown: string): Provenance | undefined {
  const m = LINE.exec(markdown);
  if (!m || m[2] !== RUNTIME_PATHS.join(', ')) return undefined;
  return { commit: m[1]!, runtimeTree: m[3]!, runtimeCommit: m[4]!, runtimeDirty: m[5] !== undefined };
}

/** Why figures recorded as `recorded` are not of the runtime whose trees digest to `currentTree`; [] when fresh. */
export function stalenessReasons(recorded: Provenance | undefined, currentTree: string): string[] {
  if (recorded === undefined) return ['it records no source (written before runs recorded one)'];
  const reasons: string[] = [];
  if (recorded.runtimeDirty) reasons.push('it measured runtime code with uncommitted changes');
  if (recorded.runtimeTree !== currentTree)
    reasons.push(
      `the runtime changed since it was measured (tree ${recorded.runtimeTree}, last changed in ` +
        `${recorded.runtimeCommit.slice(0, 12)}; HEAD's tree is ${currentTree})`,
    );
  return reasons;
}
