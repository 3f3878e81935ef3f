import { pairedByRound } from '../lib/before-after.js';
import { withBenchRedis } from '../lib/bench-redis.js';
import { summarizeLatencies } from '../lib/latency-stats.js';
import { loadCells, loadColumns, summarizeRounds } from '../lib/load-summary.js';
import { jobsNote, type QueueRound } from '../lib/queue-measure.js';
import { formatNumber, formatRatio, markdownTable, median } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';
import { startBenchCluster } from './cluster.js';
import { databaseOf, measurePostgresServers, type PostgresMeasurement } from './measure.js';
import { benchPrerequisites } from './prerequisites.js';
import { measureProcessingCost, type ProcessingCost } from './processing-cost.js';
import { measureStartLatency, type StartLatencies } from './start-latency.js';

/** Each framework: the hand-written pg-boss route (reference) and ours on Postgres. */
const FRAMEWORKS = [
  { framework: 'Express 5', prefix: 'express', adapter: 'createMiddleware(receiver)' },
  { framework: 'Fastify 5', prefix: 'fastify', adapter: 'churnRiskPlugin' },
] as const;
const KINDS = ['hand-pgboss', 'ours-postgres'] as const;
const GOAL = 0.9;
const CONNECTIONS = 32;

const label = (adapter: string, kind: string): string =>
  kind === 'hand-pgboss'
    ? 'reference: raw body + hand-written check + BEGIN, identity INSERT, pg-boss send, COMMIT'
    : `${adapter}, createPostgresQueue, consume: false`;

const perRound = (rounds: readonly QueueRound[], key: string): number =>
  median(rounds.map((r) => r.store[key] ?? Number.NaN));

function throughputTable(measured: PostgresMeasurement, names: readonly string[]) {
  const roundsOf = (name: string): QueueRound[] => measured.rounds.get(name) ?? [];
  const rows: string[][] = [];
  const verdicts: string[] = [];
  for (const { framework, prefix, adapter } of FRAMEWORKS) {
    const reference = `${prefix}-hand-pgboss`;
    if (!names.includes(reference)) continue;
    const base = summarizeRounds(roundsOf(reference));
    for (const kind of KINDS) {
      const name = `${prefix}-${kind}`;
      const own = roundsOf(name);
      const summary = summarizeRounds(own);
      const pairs = [
        pairedByRound(own, roundsOf(reference), (r) => r.requestsPerSecond),
        pairedByRound(own, roundsOf(reference), (r) => 1 / r.cpuPerRequest),
      ];
      rows.push([
        framework,
        label(adapter, kind),
        ...loadCells(summary, base),
        formatNumber(median(own.map((r) => r.storeCpuPerRequest))),
        formatNumber(perRound(own, 'walBytes')),
        `${perRound(own, 'statements').toFixed(2)} / ${perRound(own, 'commits').toFixed(2)}`,
        pairs.map(formatRatio).join(' / '),
        own
          .map((r) => `${formatNumber(r.requestsPerSecond)} / ${r.cpuPerRequest.toFixed(0)}`)
          .join('; '),
      ]);
      if (kind !== 'ours-postgres') continue;
      const rps = summary.rps / base.rps;
      const cpu = base.cpu / summary.cpu;
      const met = rps >= GOAL && cpu >= GOAL;
      verdicts.push(
        `- ${framework}: ours with the Postgres queue at ${formatRatio(rps)} of the hand-written pg-boss route in req/s and ${formatRatio(cpu)} in server CPU per request (paired by round: ${pairs.map(formatRatio).join(' / ')}; goal >= ${formatRatio(GOAL)}: ${met ? 'met' : 'NOT met'})`,
      );
    }
  }
  const header = [
    'framework',
    'server',
    ...loadColumns('reference'),
    'Postgres CPU per request (µs)',
    'WAL bytes per request',
    'statements / COMMITs per request',
    'paired by round: req/s / CPU',
    'rounds: req/s / CPU µs',
  ];
  return { table: markdownTable(header, rows), verdicts };
}

function databaseTable(measured: PostgresMeasurement, names: readonly string[]): string {
  const rows = names.map((name) => {
    const db = measured.databases.get(name);
    const answered = measured.jobs.get(name)?.answered ?? 0;
    const stored = measured.jobs.get(name)?.stored ?? 0;
    const t = db?.totals ?? {};
    const per = (key: string): string => ((t[key] ?? Number.NaN) / answered).toFixed(2);
    return [
      name,
      formatNumber(answered),
      per('commits'),
      per('rollbacks'),
      `${per('inserted')} / ${per('updated')} / ${per('deleted')}`,
      formatNumber((db?.schemaBytes ?? Number.NaN) / stored),
    ];
  });
  return markdownTable(
    [
      'server',
      '202s (whole run)',
      'commits per 202',
      'rollbacks per 202',
      'rows inserted / updated / deleted per 202',
      'bytes stored per waiting alert (tables + indexes)',
    ],
    rows,
  );
}

function statementsTable(measured: PostgresMeasurement, name: string): string {
  const answered = measured.jobs.get(name)?.answered ?? 0;
  const rows = (measured.databases.get(name)?.statements ?? []).map((s) => [
    `\`${s.query.replace(/\s+/g, ' ').slice(0, 90)}${s.query.length > 90 ? '…' : ''}\``,
    (s.calls / answered).toFixed(3),
    (s.rows / Math.max(1, s.calls)).toFixed(2),
    formatNumber(s.walBytes / answered),
    s.meanMs.toFixed(3),
  ]);
  return markdownTable(
    ['statement', 'calls per 202', 'rows per call', 'WAL bytes per 202', 'mean ms'],
    rows,
  );
}

function processingTable(cost: ProcessingCost): string {
  return markdownTable(
    [
      'alerts handled (window)',
      'alerts/s (one worker)',
      'Postgres CPU per alert (µs)',
      'worker CPU per alert (µs)',
      'WAL bytes per alert',
      'statements per alert',
      "commits per alert (worker's life)",
      'rows inserted / updated / deleted per alert',
    ],
    [
      [
        `${formatNumber(cost.processed)}${cost.left === 0 ? ' (ran dry: a floor)' : ''}`,
        formatNumber(cost.perSecond),
        formatNumber(cost.storeCpu),
        formatNumber(cost.workerCpu),
        formatNumber(cost.store.walBytes ?? Number.NaN),
        (cost.store.statements ?? Number.NaN).toFixed(2),
        (cost.totals.commits ?? Number.NaN).toFixed(2),
        ['inserted', 'updated', 'deleted']
          .map((k) => (cost.totals[k] ?? Number.NaN).toFixed(2))
          .join(' / '),
      ],
    ],
  );
}

function latencyTable(latency: StartLatencies): string {
  const rows = (['postgres', 'redis'] as const).map((mode) => {
    const s = summarizeLatencies(latency.delays.get(mode) ?? []);
    const ms = (v: number): string => v.toFixed(2);
    return [
      mode === 'postgres' ? 'Postgres (createPostgresQueue)' : 'Redis (createRedisQueue)',
      formatNumber(s.count),
      formatNumber(median(latency.rates.get(mode) ?? []), 0),
      ms(s.p50),
      ms(s.p99),
      `${ms(s.min)} / ${ms(s.max)}`,
    ];
  });
  return markdownTable(
    ['mode', 'alerts', 'sent at (alerts/s)', 'p50 (ms)', 'p99 (ms)', 'min / max (ms)'],
    rows,
  );
}

/**
 * `pnpm bench postgres`: the receiver with `createPostgresQueue` against a hand-written pg-boss
 * route in Express and Fastify, the database's cost per alert accepted and processed, and the
 * time from the 202 to a handler's start beside Redis mode's. One PostgreSQL cluster and one
 * redis-server for the run; every process that loads pg-boss runs on Node >= 22.12.
 */
export async function runPostgres(settings: BenchSettings): Promise<BenchResult> {
  const { binDir, node } = benchPrerequisites();
  const { only } = settings;
  const names = FRAMEWORKS.map((f) => KINDS.map((kind) => `${f.prefix}-${kind}`))
    .filter((group) => only === undefined || group.some((name) => name.includes(only)))
    .flat();
  if (names.length === 0) throw new Error(`no Postgres benchmark server matches "${only ?? ''}"`);
  const rounds = settings.quick ? 1 : 4;
  const duration = settings.quick ? 2 : 5;
  const cluster = await startBenchCluster(binDir);
  try {
    return await withBenchRedis(async (redis) => {
      const measured = await measurePostgresServers(
        names,
        { connections: CONNECTIONS, rounds, duration, warmup: settings.quick ? 1 : 3 },
        cluster,
        node,
      );
      const drained = names.find((n) => n.endsWith('-ours-postgres')) ?? names[0] ?? '';
      console.error(`processing cost: draining ${drained}`);
      const processing = await measureProcessingCost(cluster, node, databaseOf(drained), {
        seconds: settings.quick ? 2 : 5,
        warmup: 500,
      });
      const latency = await measureStartLatency({
        cluster,
        redisUrl: redis.url,
        node,
        rounds: settings.quick ? 1 : 4,
        alerts: settings.quick ? 30 : 100,
        gapMs: 20,
      });
      const { table, verdicts } = throughputTable(measured, names);
      const jobs = names
        .map((name) => jobsNote(name, measured.jobs.get(name), CONNECTIONS, 'Postgres'))
        .filter(Boolean);
      const ours = names.filter((n) => n.endsWith('-ours-postgres'));
      const hands = names.filter((n) => n.endsWith('-hand-pgboss'));
      const notes = [
        `${CONNECTIONS} connections, ${rounds} interleaved round(s) of ${duration} s per server after a warm-up;`,
        'each request a fresh ~250-byte alert (new identity) signed when sent. One PostgreSQL 15 cluster',
        '(127.0.0.1, fsync off, pg_stat_statements loaded), a database per server, every server in its own',
        "child process on Node 22. Server CPU per request: the server process's user + system CPU time in",
        'a round over the requests answered in it; Postgres CPU likewise for the postmaster and all its',
        'processes (backends, WAL writer, autovacuum...) from /proc. WAL bytes: pg_current_wal_lsn() moved',
        "during the round; statements and COMMITs: pg_stat_statements calls in the server's database.",
        'Medians over the rounds; "paired by round" is the median of the per-round ratios to the reference',
        'measured in the same round.',
      ].join(' ');
      const statementSections = [...ours.slice(0, 1), ...hands.slice(0, 1)]
        .map(
          (name) =>
            `Statements of \`${name}\` (pg_stat_statements, whole run):\n\n${statementsTable(measured, name)}`,
        )
        .join('\n\n');
      const markdown = [
        table,
        verdicts.join('\n'),
        notes,
        `Jobs stored (no dedupe short-circuit): ${jobs.join('; ')}.`,
        '#### The database per accepted alert (pg_stat_database, whole run, once the servers exited)',
        databaseTable(measured, names),
        cluster.statements ? statementSections : 'pg_stat_statements was not available.',
        `#### Processing: one worker drains \`${drained}\`'s alerts (no-op handler, concurrency 10)`,
        processingTable(processing),
        "#### From the 202 to the handler's start, Postgres and Redis (same run)",
        latencyTable(latency),
        "A web process (Express, `consume: false`) and a worker (the queue's defaults, concurrency 10) per mode, all on Node 22; alerts sent one at a time, 20 ms after the previous 202; the 202's arrival in the sender and the handler's first line in the worker timed on the machine's monotonic clock (`process.hrtime`, one clock for every process). Rounds alternate the modes.",
      ].join('\n\n');
      return {
        name: 'postgres',
        title:
          'Postgres mode: receiver with the Postgres queue vs a hand-written pg-boss route (autocannon), cost per alert, 202 to handler start',
        markdown,
        data: {
          rounds: Object.fromEntries(measured.rounds),
          jobs: Object.fromEntries(measured.jobs),
          databases: Object.fromEntries(measured.databases),
          processing,
          latency: {
            delays: Object.fromEntries(latency.delays),
            rates: Object.fromEntries(latency.rates),
          },
        },
      };
    });
  } finally {
    await cluster.stop();
  }
}
