/**
 * Deterministic randomness for the load tests: a small seeded PRNG (mulberry32) and a string hash,
 * so that every "random" failure, delay and fate is the same on every run.
 */

/** A PRNG returning numbers in [0, 1), like `Math.random`, from a 32-bit seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of `text`, a 32-bit unsigned integer (to derive a seed from content). */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** One draw in [0, 1) decided only by `seed` and `parts`: the same inputs, the same draw. */
export function drawFor(seed: number, ...parts: (string | number)[]): number {
  return seededRandom(hashString(`${seed}|${parts.join('|')}`))();
}
