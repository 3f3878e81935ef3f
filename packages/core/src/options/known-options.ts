/** Edit distance between two short strings (option names), case-insensitive. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const row = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      row[j] = Math.min(
        (previous[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
    }
    previous = row;
  }
  return previous[y.length] ?? 0;
}

/** The known option closest to `key`, when it is close enough to be a likely typo. */
export function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    const d = distance(key, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(key.length / 3))
    ? best
    : undefined;
}

/**
 * Old and mistaken option names, each with a hint that names the option to use: the one map every
 * `create*` function of the packages refuses them with (`refuseUnknownOptions`'s `renamed`). A back
 * end may add hints of its own on top of it, for options that mean nothing there.
 *
 * @example
 * refuseUnknownOptions('createMyQueue', options, ['leaseMs', 'dedupeTtlMs'], RENAMED_OPTIONS);
 */
export const RENAMED_OPTIONS: Readonly<Record<string, string>> = /* @__PURE__ */ Object.freeze({
  lockDurationMs: 'the lease is called leaseMs',
  stalledIntervalMs: 'the reclaim interval is called reclaimIntervalMs',
  ttlMs: 'the de-duplication TTL is the option dedupeTtlMs',
});

/**
 * Refuses an options object with a key that `where` does not know, with a `TypeError` that names
 * the key and the closest known key (`renamed` maps old or mistaken names to a hint of their own,
 * such as `lockDurationMs` to `leaseMs`: `RENAMED_OPTIONS`, plus any of the back end's own). For back-end authors: JavaScript callers get the same
 * refusal TypeScript gives, instead of an option that is quietly ignored.
 *
 * @example
 * refuseUnknownOptions('createRedisQueue', options, ['connection', 'leaseMs'], RENAMED_OPTIONS);
 */
export function refuseUnknownOptions(
  where: string,
  options: object,
  known: readonly string[],
  renamed: Readonly<Record<string, string>> = {},
): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const hint = Object.hasOwn(renamed, key) ? renamed[key] : undefined;
    const near = closest(key, known);
    const suggestion =
      hint !== undefined ? ` (${hint})` : near !== undefined ? ` (did you mean ${near}?)` : '';
    throw new TypeError(
      `${where} does not know the option ${JSON.stringify(key)}${suggestion}. Known options: ` +
        `${known.join(', ')}.`,
    );
  }
}
