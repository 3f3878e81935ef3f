/**
 * Interleaved rounds with Web APIs only (no `process`): each candidate's batch is calibrated to
 * about `batchMs`, one warm-up round, then `rounds` rounds in which every candidate runs one
 * batch, each round starting with the next candidate. `time(name, n)` runs one batch and returns
 * its milliseconds: in-process where the clock moves (Bun, Deno, Node), or from outside for
 * workerd, whose clock stands still while a request computes.
 */
export type TimeBatch = (name: string, n: number) => Promise<number>;

export interface EdgeResult {
  name: string;
  /** Median over the rounds of operations per second. */
  opsPerSecond: number;
  minOpsPerSecond: number;
  maxOpsPerSecond: number;
  batchSize: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Doubles the batch until it takes a quarter of `batchMs` (twice in a row: a stall is not taken for work), then scales it. */
async function calibrate(name: string, time: TimeBatch, batchMs: number): Promise<number> {
  let n = 1;
  for (;;) {
    const ms = await time(name, n);
    if (ms >= batchMs / 4 || n >= 1 << 22) {
      const again = Math.min(ms, await time(name, n));
      if (again >= batchMs / 4 || n >= 1 << 22) {
        return Math.max(1, Math.round((n * batchMs) / Math.max(again, 0.001)));
      }
    }
    n *= 2;
  }
}

export async function edgeRounds(
  names: readonly string[],
  time: TimeBatch,
  options: { rounds: number; batchMs: number },
): Promise<EdgeResult[]> {
  const sizes: number[] = [];
  for (const name of names) sizes.push(await calibrate(name, time, options.batchMs));
  for (const [i, name] of names.entries()) await time(name, sizes[i] as number);
  const rates: number[][] = names.map(() => []);
  for (let round = 0; round < options.rounds; round++) {
    for (let k = 0; k < names.length; k++) {
      const i = (round + k) % names.length;
      const n = sizes[i] as number;
      const ms = await time(names[i] as string, n);
      (rates[i] as number[]).push((n * 1000) / Math.max(ms, 0.001));
    }
  }
  return names.map((name, i) => {
    const list = rates[i] as number[];
    return {
      name,
      opsPerSecond: median(list),
      minOpsPerSecond: Math.min(...list),
      maxOpsPerSecond: Math.max(...list),
      batchSize: sizes[i] as number,
    };
  });
}
