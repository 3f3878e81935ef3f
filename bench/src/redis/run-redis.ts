import { beforeAfterMarkdown, pairedByRound, type BeforeAfter } from '../lib/before-after.js';
import { loadCells, summarizeRounds, type RoundsSummary } from '../lib/load-summary.js';
import { beforeHas, beforeLabel } from '../lib/packages.js';
import { formatNumber, formatRatio, markdownTable, median } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';
import { jobsNote } from '../lib/queue-measure.js';
import { measureRedisServers, type RedisRound } from './measure.js';

/** Each framework: the hand-written BullMQ route (reference), ours on Redis, ours in memory. */
const FRAMEWORKS = [
  { framework: 'Express 5', prefix: 'express', adapter: 'createMiddleware(receiver)' },
  { framework: 'Fastify 5', prefix: 'fastify', adapter: 'churnRiskPlugin' },
] as const;
const GOAL = 0.9;
const CONNECTIONS = 32;

const label = (adapter: string, kind: string, before?: string): string =>
  kind === 'hand-bullmq'
    ? 'reference: raw body + hand-written check + BullMQ queue.add (dedupe)'
    : kind === 'ours-redis'
      ? `${adapter}, createRedisQueue, consume: false`
      : kind === 'ours-redis-before'
        ? `before ${before ?? ''}: ${adapter}, createRedisQueue, consume: false`
        : `${adapter}, default in-memory queue (information)`;

const COLUMNS = [
  'req/s (median)',
  'vs reference',
  'server CPU per request (µs)',
  'CPU: reference / this',
  'latency p50 / p99 (ms)',
  'answers',
  'redis-server CPU per request (µs)',
  'paired by round: req/s / CPU',
  'rounds: req/s / CPU µs',
];

/**
 * `pnpm bench redis`: the receiver with the Redis queue against a hand-written route in the same
 * framework that verifies and calls BullMQ's `queue.add` itself; the in-memory receiver for
 * information. One redis-server for the run; see measure.ts.
 */
export async function runRedis(settings: BenchSettings): Promise<BenchResult> {
  const { only, before } = settings;
  // --before=<git-ref>: ours on Redis also on the before build's packages, when they built there.
  const kindsOf = (prefix: 'express' | 'fastify'): string[] =>
    beforeHas(before, '@churn-risk/core', '@churn-risk/redis', `@churn-risk/${prefix}`)
      ? ['hand-bullmq', 'ours-redis', 'ours-redis-before', 'ours-memory']
      : ['hand-bullmq', 'ours-redis', 'ours-memory'];
  // --only=<text>: every framework that has a server whose name contains it, with its reference.
  const names = FRAMEWORKS.map((f) => kindsOf(f.prefix).map((kind) => `${f.prefix}-${kind}`))
    .filter((group) => only === undefined || group.some((name) => name.includes(only)))
    .flat();
  if (names.length === 0) throw new Error(`no Redis benchmark server matches "${only ?? ''}"`);
  const rounds = settings.quick ? 1 : 4;
  const duration = settings.quick ? 2 : 5;
  const measured = await measureRedisServers(names, {
    connections: CONNECTIONS,
    rounds,
    duration,
    warmup: settings.quick ? 1 : 3,
  });
  const roundsOf = (name: string): RedisRound[] => measured.rounds.get(name) ?? [];
  const summary = (name: string): RoundsSummary => summarizeRounds(roundsOf(name));

  const rows: string[][] = [];
  const verdicts: string[] = [];
  const beforeAfter: BeforeAfter[] = [];
  const beforeName = before === undefined ? undefined : beforeLabel(before);
  for (const { framework, prefix, adapter } of FRAMEWORKS) {
    const reference = `${prefix}-hand-bullmq`;
    if (!names.includes(reference)) continue;
    const base = summary(reference);
    const kinds = kindsOf(prefix);
    if (kinds.includes('ours-redis-before')) {
      beforeAfter.push({
        framework,
        reference: roundsOf(reference),
        after: roundsOf(`${prefix}-ours-redis`),
        before: roundsOf(`${prefix}-ours-redis-before`),
      });
    }
    for (const kind of kinds) {
      const name = `${prefix}-${kind}`;
      const own = roundsOf(name);
      const pairs = [
        pairedByRound(own, roundsOf(reference), (r) => r.requestsPerSecond),
        pairedByRound(own, roundsOf(reference), (r) => 1 / r.cpuPerRequest),
      ];
      rows.push([
        framework,
        label(adapter, kind, beforeName),
        ...loadCells(summary(name), base),
        formatNumber(median(own.map((r) => r.storeCpuPerRequest))),
        pairs.map(formatRatio).join(' / '),
        own
          .map((r) => `${formatNumber(r.requestsPerSecond)} / ${r.cpuPerRequest.toFixed(0)}`)
          .join('; '),
      ]);
      if (kind !== 'ours-redis') continue;
      const rps = summary(name).rps / base.rps;
      const cpu = base.cpu / summary(name).cpu;
      const met = rps >= GOAL && cpu >= GOAL;
      verdicts.push(
        `- ${framework}: ours with the Redis queue at ${formatRatio(rps)} of the hand-written BullMQ route in req/s and ${formatRatio(cpu)} in server CPU per request (paired by round: ${pairs.map(formatRatio).join(' / ')}; goal >= ${formatRatio(GOAL)}: ${met ? 'met' : 'NOT met'})`,
      );
    }
  }
  const table = markdownTable(['framework', 'server', ...COLUMNS], rows);
  const jobs = names
    .map((name) => jobsNote(name, measured.jobs.get(name), CONNECTIONS, 'Redis'))
    .filter(Boolean);
  const missing = FRAMEWORKS.filter(
    (f) =>
      names.includes(`${f.prefix}-hand-bullmq`) && !kindsOf(f.prefix).includes('ours-redis-before'),
  );
  const beforeSection =
    beforeName === undefined
      ? ''
      : `\n\n${beforeAfterMarkdown(
          beforeAfter,
          beforeName,
          missing.map((f) => f.framework),
        )}`;
  const notes = [
    `${CONNECTIONS} connections, ${rounds} interleaved round(s) of ${duration} s per server after a warm-up;`,
    'each request a fresh ~250-byte alert (new identity) signed when sent. One redis-server for the run',
    '(127.0.0.1, no persistence), each server in its own child process with its own key prefix.',
    "Server CPU per request: the server process's user + system CPU time in a round over the requests",
    "answered in it; redis-server's likewise, from /proc (10 ms ticks). Medians over the rounds;",
    '"paired by round" is the median of the per-round ratios to the reference measured in the same round.',
  ].join(' ');
  return {
    name: 'redis',
    title: 'Redis mode: receiver with the Redis queue vs a hand-written BullMQ route (autocannon)',
    markdown: `${table}\n\n${verdicts.join('\n')}\n\n${notes}\n\nJobs stored (no dedupe short-circuit): ${jobs.join('; ')}.${beforeSection}`,
    data: { rounds: Object.fromEntries(measured.rounds), jobs: Object.fromEntries(measured.jobs) },
  };
}
