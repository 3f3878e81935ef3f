/**
 * `--before=<git-ref>` in the HTTP benchmarks (`http`, `redis`): per framework, our server on the
 * working tree's packages (after) and on the before build's (before), each against the same
 * reference measured in the same rounds, and after against before.
 */
import { summarizeRounds, type MeasuredRound } from './load-summary.js';
import { formatRatio, markdownTable, median } from './table.js';

export interface BeforeAfter {
  framework: string;
  reference: readonly MeasuredRound[];
  after: readonly MeasuredRound[];
  before: readonly MeasuredRound[];
}

/** The median over the rounds of `of(round) / of(the other's round of the same index)`. */
export function pairedByRound(
  rounds: readonly MeasuredRound[],
  other: readonly MeasuredRound[],
  of: (round: MeasuredRound) => number,
): number {
  return median(
    rounds.map((round, i) => {
      const twin = other[i];
      return twin === undefined ? Number.NaN : of(round) / of(twin);
    }),
  );
}

const rps = (round: MeasuredRound): number => round.requestsPerSecond;
/** Requests per CPU second: its ratio is "the other's CPU per request / this one's". */
const perCpu = (round: MeasuredRound): number => 1 / round.cpuPerRequest;

/** "1.02x / 0.98x": req/s, then CPU per request (the other's over this one's: above 1 = cheaper). */
function ratios(a: readonly MeasuredRound[], b: readonly MeasuredRound[]): string {
  const [x, y] = [summarizeRounds(a), summarizeRounds(b)];
  return `${formatRatio(x.rps / y.rps)} / ${formatRatio(y.cpu / x.cpu)}`;
}

function pairedRatios(a: readonly MeasuredRound[], b: readonly MeasuredRound[]): string {
  return `${formatRatio(pairedByRound(a, b, rps))} / ${formatRatio(pairedByRound(a, b, perCpu))}`;
}

/**
 * The table of the before/after comparison and the notes that say how to read it; `missing`: the
 * frameworks with no before twin (their packages did not build at that commit).
 */
export function beforeAfterMarkdown(
  rows: readonly BeforeAfter[],
  beforeName: string,
  missing: readonly string[] = [],
): string {
  const heading = `#### Before and after, before = ${beforeName}`;
  const none =
    missing.length === 0
      ? ''
      : `No before twin for ${missing.join(', ')}: the packages it needs did not build at ${beforeName}.`;
  if (rows.length === 0) return `${heading}\n\n${none}`;
  const table = markdownTable(
    [
      'framework',
      'after / reference: req/s / CPU',
      `before / reference: req/s / CPU`,
      'after / before: req/s / CPU',
      'after / before, paired by round: req/s / CPU',
    ],
    rows.map((row) => [
      row.framework,
      ratios(row.after, row.reference),
      ratios(row.before, row.reference),
      ratios(row.after, row.before),
      pairedRatios(row.after, row.before),
    ]),
  );
  const notes = [
    `Before and after in the same run: "before" is the same server on the packages built at`,
    `${beforeName}, "after" on the working tree's; both measured in the same interleaved rounds as`,
    'the reference. Ratios: req/s (higher is better), then CPU per request as "the other / this"',
    '(above 1.00x this one costs less). "after / before" below 1.00x: the working tree is slower;',
    '"paired by round" is the median of the ratios of the rounds (each round measures both).',
  ].join(' ');
  return `${heading}\n\n${table}\n\n${notes}${none === '' ? '' : `\n\n${none}`}`;
}
