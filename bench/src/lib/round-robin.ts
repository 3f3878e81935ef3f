import { median } from './table.js';

/** One thing to measure: `fn` does one operation (sync, or async when it returns a promise). */
export interface Candidate {
  name: string;
  fn: () => unknown;
  /** Set when `fn` returns a promise that must be awaited. */
  async?: boolean;
}

export interface RoundRobinOptions {
  /** Measured rounds; in each, every candidate runs one batch. */
  rounds: number;
  /** Target duration of one batch, in milliseconds. */
  batchMs: number;
  /**
   * What a batch's duration is: wall time (default), or this process's CPU time (user + system),
   * which leaves out the time the process waited for a core: steadier on a machine shared with
   * other work, for candidates that do not wait on I/O.
   */
  clock?: 'wall' | 'cpu';
}

export interface CandidateResult {
  name: string;
  /** Median over the rounds of the batch's operations per second. */
  opsPerSecond: number;
  /** Slowest and fastest round, operations per second (the spread shows the noise). */
  minOpsPerSecond: number;
  maxOpsPerSecond: number;
  /** Operations in one batch (calibrated). */
  batchSize: number;
  rounds: number;
  /** Operations per second in each measured round, in round order (for ratios paired by round). */
  roundOpsPerSecond: number[];
}

let clock: 'wall' | 'cpu' = 'wall';

/** Milliseconds on the selected clock. */
function now(): number {
  if (clock === 'wall') return Number(process.hrtime.bigint()) / 1e6;
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

async function runBatch(candidate: Candidate, iterations: number): Promise<number> {
  const { fn } = candidate;
  const start = now();
  if (candidate.async === true) {
    for (let i = 0; i < iterations; i++) await fn();
  } else {
    for (let i = 0; i < iterations; i++) fn();
  }
  return now() - start;
}

/** Doubles the batch until it takes a quarter of `batchMs`, then scales it to `batchMs`. */
async function calibrate(candidate: Candidate, batchMs: number): Promise<number> {
  let iterations = 1;
  for (;;) {
    const ms = await runBatch(candidate, iterations);
    if (ms >= batchMs / 4 || iterations >= 1 << 24) {
      return Math.max(1, Math.round((iterations * batchMs) / Math.max(ms, 0.001)));
    }
    iterations *= 2;
  }
}

/**
 * Measures the candidates interleaved: every round runs one batch of each, starting with a
 * different candidate each round, so that drift (other load on the machine, thermal changes, GC
 * pressure) spreads over all of them instead of hitting the ones measured last.
 */
export async function roundRobin(
  candidates: readonly Candidate[],
  options: RoundRobinOptions,
): Promise<CandidateResult[]> {
  clock = options.clock ?? 'wall';
  const sizes: number[] = [];
  for (const candidate of candidates) sizes.push(await calibrate(candidate, options.batchMs));
  // One unmeasured round to warm up every candidate at its final batch size.
  for (const [i, candidate] of candidates.entries()) await runBatch(candidate, sizes[i] as number);

  const rates: number[][] = candidates.map(() => []);
  for (let round = 0; round < options.rounds; round++) {
    for (let k = 0; k < candidates.length; k++) {
      const i = (round + k) % candidates.length;
      const size = sizes[i] as number;
      const ms = await runBatch(candidates[i] as Candidate, size);
      (rates[i] as number[]).push((size * 1000) / ms);
    }
  }
  return candidates.map((candidate, i) => {
    const list = rates[i] as number[];
    return {
      name: candidate.name,
      opsPerSecond: median(list),
      minOpsPerSecond: Math.min(...list),
      maxOpsPerSecond: Math.max(...list),
      batchSize: sizes[i] as number,
      rounds: list.length,
      roundOpsPerSecond: list,
    };
  });
}
