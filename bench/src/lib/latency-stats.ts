/** Order statistics of latency samples (ms), for the tables of the durable-queue benchmarks. */

/**
 * The `p`-th percentile (0 < p <= 100) of `values` by the nearest-rank method: the smallest value
 * with at least p % of the samples at or below it. NaN for no samples.
 */
export function percentile(values: readonly number[], p: number): number {
  if (!(p > 0 && p <= 100)) throw new RangeError(`percentile must be in (0, 100], got ${p}`);
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[rank - 1] as number;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
}

/** Count, median (nearest rank), p99, min and max of `values`. */
export function summarizeLatencies(values: readonly number[]): LatencySummary {
  return {
    count: values.length,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    min: values.length === 0 ? Number.NaN : Math.min(...values),
    max: values.length === 0 ? Number.NaN : Math.max(...values),
  };
}

/**
 * Pairs each start with its accept: `accepted` and `started` map an alert (its user id) to a
 * timestamp in ms; the result is `started - accepted` for every alert in both, in the order of
 * `accepted`. Alerts missing from either side are counted in `unmatched`.
 */
export function pairDelays(
  accepted: ReadonlyMap<string, number>,
  started: ReadonlyMap<string, number>,
): { delays: number[]; unmatched: number } {
  const delays: number[] = [];
  let unmatched = 0;
  for (const [id, at] of accepted) {
    const start = started.get(id);
    if (start === undefined) unmatched++;
    else delays.push(start - at);
  }
  for (const id of started.keys()) if (!accepted.has(id)) unmatched++;
  return { delays, unmatched };
}
