/** Edits (insert, delete, replace one character) that turn `a` into `b`, case ignored. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      const replace = (previous[j - 1] ?? 0) + (x[i - 1] === y[j - 1] ? 0 : 1);
      row.push(Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, replace));
    }
    previous = row;
  }
  return previous[y.length] ?? 0;
}

/** The known key nearest to `key` (fewest edits; the first of equals). */
export function closestKey(key: string, known: readonly string[]): string {
  let best = known[0] ?? '';
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(key, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/**
 * A `TypeError` for the first key of `options` that is not in `known`, naming it and the closest
 * known key: a misspelt option (`queueURL`) fails at creation instead of being ignored.
 */
export function checkKnownKeys(fn: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    throw new TypeError(
      `${fn} has no option "${key}": did you mean "${closestKey(key, known)}"? ` +
        `Its options are ${known.join(', ')}.`,
    );
  }
}
