/**
 * A small seeded PRNG for the fault plan: the same seed and label give the same sequence on every machine.
 * `cyrb53`-style string hashing derives one 32-bit stream seed per (seed, label), and mulberry32 draws from it.
 * Not for cryptography.
 */

/** A 32-bit hash of `text` (a variant of cyrb53's mixing, folded to 32 bits). */
export function hash32(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h1 ^ h2) >>> 0;
}

/** A deterministic stream of numbers in [0, 1). */
export interface Prng {
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
}

/** mulberry32 seeded with `hash32(label, seed)`. */
export function createPrng(seed: number, label = ''): Prng {
  let state = hash32(label, seed >>> 0);
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int(min, max) {
      if (!Number.isInteger(min) || !Number.isInteger(max) || min > max) {
        throw new RangeError(`bad integer range [${min}, ${max}]`);
      }
      return min + Math.floor(next() * (max - min + 1));
    },
  };
}
