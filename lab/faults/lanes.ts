/**
 * Side-by-side runs in order: at most `lanes` items at a time, each started only while `may()` holds (a time
 * budget), in the order given, so the items started are always a prefix of `items`, whichever finished first.
 */
export async function inLanes<T>(
  items: readonly T[],
  lanes: number,
  run: (item: T, index: number) => Promise<void>,
  may: () => boolean = () => true,
): Promise<number> {
  let next = 0;
  let closed = false;
  const lane = async (): Promise<void> => {
    while (!closed && next < items.length) {
      if (!may()) {
        closed = true;
        return;
      }
      const i = next++;
      await run(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(lanes, items.length)) }, lane));
  return next;
}
