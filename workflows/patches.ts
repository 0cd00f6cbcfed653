/**
 * Every patch the workflow code carries, and its window (docs/versioning.md). A `patched(id)` or
 * `deprecatePatch(id)` call in workflows/ must name a patch registered here; test/unit/versioning.test.ts fails
 * when one is not, when one has no fixtures, or when one outlives its window. 1.0 carries none.
 */

/** The longest a run that started before a patch may still be open: deprecate after one window, remove after two. */
export const PATCH_WINDOW_DAYS = 14;

export interface RegisteredPatch {
  readonly id: string;
  /** The day the patch shipped (YYYY-MM-DD). */
  readonly introduced: string;
  /** `patched`: old and new branches both live; `deprecated`: `deprecatePatch`, the old branch gone. */
  readonly stage: 'patched' | 'deprecated';
}

export const PATCHES: readonly RegisteredPatch[] = [];
