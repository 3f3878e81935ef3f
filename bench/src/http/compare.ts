/**
 * Any HTTP servers of servers.ts side by side, against the first one named (not part of `pnpm
 * bench`; for finding what a server's cost is made of):
 *   node --import tsx bench/src/http/compare.ts fastify-hand fastify-ours [--rounds=6] [--duration=3]
 * Rounds are interleaved as in `pnpm bench http`; prints each round and the medians.
 */
import {
  loadCells,
  loadColumns,
  summarizeRounds,
  type MeasuredRound,
} from '../lib/load-summary.js';
import { formatRatio, markdownTable, median } from '../lib/table.js';
import { measureServers } from './measure.js';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const found = args.find((a) => a.startsWith(`--${name}=`));
  return found === undefined ? fallback : Number(found.slice(name.length + 3));
};
const names = args.filter((a) => !a.startsWith('--'));
if (names.length === 0) throw new Error('name at least one server of servers.ts');
const runs = await measureServers(names, {
  connections: option('connections', 32),
  rounds: option('rounds', 6),
  duration: option('duration', 3),
  warmup: option('warmup', 2),
  progress: () => undefined,
});
const referenceRounds = runs.get(names[0] as string) ?? [];
const reference = summarizeRounds(referenceRounds);
/** The median over the rounds of the ratio to the reference in the same round (paired in time). */
const paired = (rounds: readonly MeasuredRound[], of: (r: MeasuredRound) => number): string =>
  formatRatio(median(rounds.map((r, i) => of(r) / of(referenceRounds[i] as MeasuredRound))));
const rows = names.map((name) => {
  const rounds = runs.get(name) ?? [];
  const perRound = rounds
    .map((r) => `${Math.round(r.requestsPerSecond)}/${r.cpuPerRequest.toFixed(1)}`)
    .join(' ');
  return [
    name,
    ...loadCells(summarizeRounds(rounds), reference),
    paired(rounds, (r) => r.requestsPerSecond),
    paired(rounds, (r) => 1 / r.cpuPerRequest),
    perRound,
  ];
});
console.log(
  markdownTable(
    [
      'server',
      ...loadColumns(names[0] as string),
      'req/s, paired by round',
      'CPU, paired by round',
      'rounds: req/s / CPU µs',
    ],
    rows,
  ),
);
