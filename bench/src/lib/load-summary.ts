import { statusSummary, type LoadResult } from './signed-load.js';
import { formatNumber, formatRatio, median } from './table.js';

/** One measured round of load against a server, with the server's CPU per answered request. */
export interface MeasuredRound extends LoadResult {
  cpuPerRequest: number;
}

/** A server's rounds reduced to medians, and its answers summed. */
export interface RoundsSummary {
  rps: number;
  cpu: number;
  p50: number;
  p99: number;
  statuses: string;
}

export function summarizeRounds(rounds: readonly MeasuredRound[]): RoundsSummary {
  const statuses: Record<string, number> = {};
  let errors = 0;
  for (const round of rounds) {
    errors += round.errors;
    for (const [code, n] of Object.entries(round.statuses)) {
      statuses[code] = (statuses[code] ?? 0) + n;
    }
  }
  return {
    rps: median(rounds.map((r) => r.requestsPerSecond)),
    cpu: median(rounds.map((r) => r.cpuPerRequest)),
    p50: median(rounds.map((r) => r.latencyP50)),
    p99: median(rounds.map((r) => r.latencyP99)),
    statuses: statusSummary(statuses, errors),
  };
}

/** The columns `loadCells` fills, after the ones naming the server; ratios against `reference`. */
export function loadColumns(reference: string): readonly string[] {
  return [
    'req/s (median)',
    `vs ${reference}`,
    'server CPU per request (µs)',
    `CPU: ${reference} / this`,
    'latency p50 / p99 (ms)',
    'answers',
  ];
}

/** `loadColumns` against the bare route. */
export const LOAD_COLUMNS: readonly string[] = loadColumns('bare');

/** A server's cells for `loadColumns`, with its ratios to the reference server's summary. */
export function loadCells(summary: RoundsSummary, bare: RoundsSummary): string[] {
  return [
    formatNumber(summary.rps),
    formatRatio(summary.rps / bare.rps),
    formatNumber(summary.cpu),
    formatRatio(bare.cpu / summary.cpu),
    `${summary.p50} / ${summary.p99}`,
    summary.statuses,
  ];
}
