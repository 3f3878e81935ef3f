/**
 * Deterministic randomness for the load tests: the sandbox's seeded PRNG (mulberry32, as chaos uses
 * it) and a string hash, so that every "random" failure, delay and fate is the same on every run.
 */
import { createSeededRandom } from '../../packages/sandbox/src/chaos/seeded-random.js';

/** A PRNG returning numbers in [0, 1), like `Math.random`, from a 32-bit seed. */
export const seededRandom = createSeededRandom;

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
  return createSeededRandom(hashString(`${seed}|${parts.join('|')}`))();
}
