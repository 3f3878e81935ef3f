/**
 * `pnpm bench drain`: the processing side at the engines' own speed. For Redis, ours
 * (`createRedisQueue`, a receiver with one no-op handler, concurrency 10) against BullMQ's own
 * `Worker`; for Postgres, ours (`createPostgresQueue`) against graphile-worker's `run()` and
 * pg-boss's `work()`. Two figures per side, in interleaved rounds on one redis-server / one
 * PostgreSQL 15 cluster: alerts per second to drain N stored alerts with one consuming process,
 * and the delay from the enqueue call to the handler's start at a steady 50 alerts/s.
 */
import type { BenchChild } from '../lib/child.js';
import { startChild } from '../lib/child.js';
import { withBenchRedis } from '../lib/bench-redis.js';
import { summarizeLatencies, type LatencySummary } from '../lib/latency-stats.js';
import { MailTimeoutError, mailbox, type Mailbox } from '../lib/mailbox.js';
import { prepareNode22 } from '../lib/node22.js';
import { beforeHas, beforeLabel, type BeforeBuild } from '../lib/packages.js';
import { formatNumber, formatRatio, markdownTable, median } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';
import { treeCpuMicros } from '../next/process-tree.js';
import { startBenchCluster, type StatementStat } from '../postgres/cluster.js';
import { postgresPrerequisite } from '../postgres/prerequisites.js';

type Engine = 'redis' | 'postgres';

interface SideSpec {
  name: string;
  engine: Engine;
  label: string;
  /** Ours (this tree), ours built at `--before`, or a library measured as the anchor. */
  kind: 'ours' | 'before' | 'anchor';
}

const SIDES: readonly SideSpec[] = [
  {
    name: 'ours-redis',
    engine: 'redis',
    kind: 'ours',
    label: 'ours: `createRedisQueue` defaults, a receiver with one no-op handler, concurrency 10',
  },
  {
    name: 'ours-redis-per-user',
    engine: 'redis',
    kind: 'ours',
    label: "ours on Redis in `order: 'per-user'`, the alerts spread over 1,000 users",
  },
  {
    name: 'ours-redis-10-users',
    engine: 'redis',
    kind: 'ours',
    label: "ours on Redis in `order: 'per-user'`, the worst case: every alert of 10 users",
  },
  {
    name: 'bullmq',
    engine: 'redis',
    kind: 'anchor',
    label: 'BullMQ `Worker`, concurrency 10, no-op processor',
  },
  {
    name: 'ours-postgres',
    engine: 'postgres',
    kind: 'ours',
    label:
      'ours: `createPostgresQueue` defaults, a receiver with one no-op handler, concurrency 10',
  },
  {
    name: 'ours-postgres-per-user',
    engine: 'postgres',
    kind: 'ours',
    label: "ours on Postgres in `order: 'per-user'`, the alerts spread over 1,000 users",
  },
  {
    name: 'ours-postgres-10-users',
    engine: 'postgres',
    kind: 'ours',
    label: "ours on Postgres in `order: 'per-user'`, the worst case: every alert of 10 users",
  },
  {
    name: 'graphile-worker',
    engine: 'postgres',
    kind: 'anchor',
    label: 'graphile-worker `run()`, task list, concurrency 10, defaults',
  },
  {
    name: 'pg-boss',
    engine: 'postgres',
    kind: 'anchor',
    label:
      'pg-boss `work()`, `localConcurrency: 10`, `batchSize: 1`, `burstWhenReadyExceeds: 1`; LISTEN/NOTIFY (`useListenNotify`, queue `notify: true`), `pollingIntervalSeconds: 0.5`',
  },
  {
    name: 'pg-boss-batch',
    engine: 'postgres',
    kind: 'anchor',
    label:
      "pg-boss `work()`, `batchSize: 10`, `burstWhenBatchFull: true` (one worker; the handler starts the batch's jobs at once); the same LISTEN/NOTIFY and poll",
  },
];

/** Our sides built at `--before=<ref>`, measured in the same rounds when it is given. */
function beforeSides(label: string): SideSpec[] {
  return [
    {
      name: 'ours-redis-before',
      engine: 'redis',
      kind: 'before',
      label: `ours built at ${label}: \`createRedisQueue\` defaults, the same receiver and handler`,
    },
    {
      name: 'ours-postgres-before',
      engine: 'postgres',
      kind: 'before',
      label: `ours built at ${label}: \`createPostgresQueue\` defaults, the same receiver and handler`,
    },
  ];
}

/** The anchor each engine's goal is stated against (drain ≥ 1.0x; Postgres p50 at most 2x). */
const GOAL_ANCHOR: Record<Engine, string> = { redis: 'bullmq', postgres: 'graphile-worker' };

interface DrainSettings {
  rounds: number;
  /** Alerts stored before each drain. */
  stored: Record<Engine, number>;
  /** Latency: alerts measured per round, after `warmup` unmeasured ones, one every `intervalMs`. */
  alerts: number;
  warmup: number;
  intervalMs: number;
  /** See `DRAIN_CAP_MS`. */
  capMs: number;
}

/**
 * A drain still running this long after its first handler start is cut short: its rate is taken
 * over the handlers started so far, and the alerts left are deleted with the library's API (a
 * side that has none fails: its leftovers would skew its later rounds).
 */
const DRAIN_CAP_MS = { quick: 30_000, full: 60_000 };

const FULL: DrainSettings = {
  rounds: 4,
  // Redis drains 4,000 alerts in ~0.4 s, mostly before V8 has optimized a fresh process: BullMQ's
  // own median moved between 8,800 and 10,500 alerts/s from one run to the next. 10,000 is ~0.8 s,
  // and steadier (measured 2026-11-27; see the history of bench/README.md).
  // Postgres drains are slower (pg-boss's and graphile-worker's especially): 3,000 each by default;
  // DRAIN_POSTGRES_ALERTS sets another count (the order per user is measured at 10,000).
  stored: { redis: 10_000, postgres: Number(process.env.DRAIN_POSTGRES_ALERTS ?? 3000) },
  alerts: 400,
  warmup: 25,
  intervalMs: 20,
  capMs: DRAIN_CAP_MS.full,
};
const QUICK: DrainSettings = {
  rounds: 1,
  stored: { redis: 1000, postgres: 600 },
  alerts: 100,
  warmup: 10,
  intervalMs: 20,
  capMs: DRAIN_CAP_MS.quick,
};

interface DrainRound {
  /** Alerts per second from the first handler start to the N-th. */
  perSecond: number;
  /** The consuming process's CPU per alert over the same span, µs. */
  consumerCpu: number;
  /** redis-server's or PostgreSQL's (all its processes) CPU per alert over the same span, µs. */
  storeCpu: number;
  /** How long the store phase took (the library's own enqueue, 16 in flight), ms. */
  storeMs: number;
  /** Handlers started; fewer than stored when the drain hit the time cap (`capped`). */
  drained: number;
  capped: boolean;
}

interface SideResult {
  drains: DrainRound[];
  /** Enqueue call to handler start, ms, every round. */
  delays: number[];
  /** Why the side stopped being measured, if it did. */
  failed?: string;
}

interface Target {
  url(side: string): string;
  namespace(side: string): string;
  /** The store server's root pid (its process tree's CPU is the store's). */
  pid: number;
}

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function start(
  node: string,
  role: 'producer' | 'consumer',
  side: string,
  target: Target,
): Promise<{ child: BenchChild<unknown>; mail: Mailbox }> {
  const child = await startChild<{ error?: string }>(
    'drain/child.ts',
    [role, side, target.url(side), target.namespace(side)],
    [],
    node,
  );
  if (typeof child.ready.error === 'string') {
    await child.kill();
    throw new Error(child.ready.error);
  }
  return { child, mail: mailbox(child, `${side} ${role}`) };
}

interface Done {
  first: number;
  last: number;
  count: number;
  cpuMicros: number;
  starts: [number, number][];
}

/** Starts a consumer, runs `feed` once it is taking alerts, and returns what it reports. */
async function consumeRound(
  node: string,
  side: string,
  target: Target,
  expect: number,
  capMs: number,
  feed?: () => Promise<void>,
): Promise<{ done: Done; storeCpu: number; capped: boolean }> {
  const { child, mail } = await start(node, 'consumer', side, target);
  try {
    child.send({ go: { expect } });
    if (feed !== undefined) {
      await sleep(300); // the consumer's connections and listeners are up
      await feed();
    }
    await mail.take<number>('first', 120_000);
    const storeBefore = treeCpuMicros(target.pid);
    let done: Done;
    let capped = false;
    try {
      done = await mail.take<Done>('done', capMs);
    } catch (error) {
      if (!(error instanceof MailTimeoutError)) throw error;
      child.send({ report: true });
      done = await mail.take<Done>('progress', 30_000);
      capped = true;
    }
    const storeCpu = treeCpuMicros(target.pid) - storeBefore;
    if (!capped) {
      await mail.take('closed', 30_000).catch((error: unknown) => {
        console.error(`drain: ${side} did not close gracefully (${describe(error)}); killed`);
      });
    }
    return { done, storeCpu, capped };
  } finally {
    mail.close();
    await child.kill();
  }
}

async function measureSide(
  node: string,
  side: SideSpec,
  target: Target,
  producer: { child: BenchChild<unknown>; mail: Mailbox },
  settings: DrainSettings,
  result: SideResult,
): Promise<void> {
  // (a) drain N stored alerts
  const n = settings.stored[side.engine];
  producer.child.send({ store: n });
  const stored = await producer.mail.take<{ count: number; ms: number }>('stored', 600_000);
  const drained = await consumeRound(node, side.name, target, n, settings.capMs);
  if (drained.capped) {
    producer.child.send({ purge: true });
    if (!(await producer.mail.take<boolean>('purged', 60_000))) {
      throw new Error(
        `${String(drained.done.count)} of ${String(n)} alerts drained in ${String(settings.capMs / 1000)} s, and the side cannot delete the rest`,
      );
    }
  }
  const span = drained.done.last - drained.done.first;
  const alerts = drained.done.count - 1;
  result.drains.push({
    perSecond: span > 0 ? (alerts * 1000) / span : Number.NaN,
    consumerCpu: drained.done.cpuMicros / alerts,
    storeCpu: drained.storeCpu / alerts,
    storeMs: stored.ms,
    drained: drained.done.count,
    capped: drained.capped,
  });
  // (b) delivery -> handler start at a steady rate
  const total = settings.warmup + settings.alerts;
  const steady = await consumeRound(node, side.name, target, total, 120_000, async () => {
    producer.child.send({ steady: { count: total, intervalMs: settings.intervalMs } });
    const sent = await producer.mail.take<{ count: number; failed: number }>('sent', 120_000);
    if (sent.failed > 0) throw new Error(`${String(sent.failed)} enqueues failed`);
  });
  const measured = [...steady.done.starts]
    .sort((a, b) => a[0] - b[0])
    .slice(settings.warmup)
    .map(([sentAt, startAt]) => startAt - sentAt);
  result.delays.push(...measured);
}

async function runEngine(
  engine: Engine,
  sides: readonly SideSpec[],
  node: string,
  target: Target,
  settings: DrainSettings,
): Promise<Map<string, SideResult>> {
  const results = new Map<string, SideResult>(
    sides.map((side) => [side.name, { drains: [], delays: [] }]),
  );
  const producers = new Map<string, { child: BenchChild<unknown>; mail: Mailbox }>();
  try {
    for (let round = 0; round < settings.rounds; round++) {
      for (let k = 0; k < sides.length; k++) {
        const side = sides[(round + k) % sides.length] as SideSpec;
        const result = results.get(side.name) as SideResult;
        if (result.failed !== undefined) continue;
        console.error(`drain: ${engine} round ${String(round + 1)}: ${side.name}`);
        try {
          let producer = producers.get(side.name);
          if (producer === undefined) {
            producer = await start(node, 'producer', side.name, target);
            producers.set(side.name, producer);
          }
          await measureSide(node, side, target, producer, settings, result);
        } catch (error) {
          result.failed = describe(error);
          console.error(`drain: ${side.name} failed: ${result.failed}`);
        }
      }
    }
  } finally {
    for (const { child, mail } of producers.values()) {
      mail.close();
      await child.kill();
    }
  }
  return results;
}

interface SideSummary {
  spec: SideSpec;
  perSecond: number;
  rounds: number[];
  /** Per round: whether the drain hit the time cap. */
  capped: boolean[];
  consumerCpu: number;
  storeCpu: number;
  latency: LatencySummary;
  failed?: string;
}

function summarize(spec: SideSpec, result: SideResult): SideSummary {
  return {
    spec,
    perSecond: median(result.drains.map((d) => d.perSecond)),
    rounds: result.drains.map((d) => d.perSecond),
    capped: result.drains.map((d) => d.capped),
    consumerCpu: median(result.drains.map((d) => d.consumerCpu)),
    storeCpu: median(result.drains.map((d) => d.storeCpu)),
    latency: summarizeLatencies(result.delays),
    ...(result.failed === undefined ? {} : { failed: result.failed }),
  };
}

/** Median of the per-round ratios ours / anchor (rounds where both were measured). */
function pairedRatio(ours: SideSummary, anchor: SideSummary): number {
  const pairs = ours.rounds
    .map((value, i) => value / (anchor.rounds[i] ?? Number.NaN))
    .filter((ratio) => Number.isFinite(ratio));
  return median(pairs);
}

const ms = (value: number): string => (Number.isFinite(value) ? formatNumber(value, 1) : 'n/a');
const num = (value: number, digits = 0): string =>
  Number.isFinite(value) ? formatNumber(value, digits) : 'n/a';
const ratio = (value: number): string => (Number.isFinite(value) ? formatRatio(value) : 'n/a');

function engineMarkdown(engine: Engine, summaries: readonly SideSummary[], store: string): string {
  const ours = summaries.find((s) => s.spec.kind === 'ours');
  const before = summaries.find((s) => s.spec.kind === 'before');
  const anchors = summaries.filter((s) => s.spec.kind === 'anchor');
  const rows = summaries.map((s) => [
    s.spec.kind === 'ours' ? `**${s.spec.name}**` : s.spec.name,
    s.failed === undefined ? num(s.perSecond) : `failed: ${s.failed.split('\n')[0] ?? ''}`,
    s.rounds.map((r, i) => `${num(r)}${s.capped[i] === true ? ' (capped)' : ''}`).join(', '),
    num(s.consumerCpu),
    num(s.storeCpu),
    `${ms(s.latency.p50)} / ${ms(s.latency.p99)}`,
    `${ms(s.latency.min)} / ${ms(s.latency.max)}`,
    String(s.latency.count),
  ]);
  const table = markdownTable(
    [
      'side',
      'drain: alerts/s (median)',
      'rounds',
      'consumer CPU µs/alert',
      `${store} CPU µs/alert`,
      'enqueue → handler start p50 / p99 (ms)',
      'min / max (ms)',
      'alerts timed',
    ],
    rows,
  );
  const pairs: [SideSummary, SideSummary][] = [];
  for (const mine of [ours, before]) {
    if (mine === undefined) continue;
    for (const anchor of anchors) pairs.push([mine, anchor]);
  }
  if (ours !== undefined && before !== undefined) pairs.push([ours, before]);
  const ratioRows = pairs.map(([mine, other]) => [
    `${mine.spec.name} / ${other.spec.name}`,
    ratio(mine.perSecond / other.perSecond),
    ratio(pairedRatio(mine, other)),
    ratio(mine.latency.p50 / other.latency.p50),
    ratio(mine.latency.p99 / other.latency.p99),
  ]);
  const ratios = markdownTable(
    [
      'ours / other',
      'drain alerts/s (medians)',
      'drain, paired by round',
      'latency p50 (lower is better)',
      'latency p99',
    ],
    ratioRows,
  );
  const goal = anchors.find((a) => a.spec.name === GOAL_ANCHOR[engine]);
  const verdicts: string[] = [];
  if (ours !== undefined && goal !== undefined) {
    const drain = ours.perSecond / goal.perSecond;
    verdicts.push(
      `Goal: drain ≥ 1.0x ${goal.spec.name}: **${ratio(drain)}**, ${
        drain >= 1 ? 'met' : 'not met'
      }.`,
    );
    if (engine === 'postgres') {
      const p50 = ours.latency.p50 / goal.latency.p50;
      verdicts.push(
        `Goal: p50 at most 2x ${goal.spec.name}'s: **${ratio(p50)}** (${ms(ours.latency.p50)} against ${ms(goal.latency.p50)} ms), ${
          p50 <= 2 ? 'met' : 'not met'
        }.`,
      );
    }
  }
  const labels = summaries.map((s) => `- \`${s.spec.name}\`: ${s.spec.label}`).join('\n');
  return [table, ratios, verdicts.join('\n'), labels].filter((part) => part !== '').join('\n\n');
}

/**
 * Where each Postgres side's database time went: its most called statements over the whole run
 * (the store phases, the drains and the latency rounds), per alert enqueued.
 */
async function statementsMarkdown(
  sides: readonly SideSpec[],
  results: ReadonlyMap<string, SideResult>,
  config: DrainSettings,
  top: (side: string) => Promise<StatementStat[]>,
): Promise<string> {
  const parts: string[] = [];
  for (const side of sides) {
    const result = results.get(side.name);
    if (result === undefined || result.failed !== undefined) continue;
    const alerts = result.drains.length * (config.stored.postgres + config.warmup + config.alerts);
    const rows = (await top(side.name)).map((s) => [
      `\`${s.query.replace(/\s+/g, ' ').slice(0, 90)}${s.query.length > 90 ? '…' : ''}\``,
      formatNumber(s.calls / alerts, 2),
      formatNumber(s.rows / Math.max(1, s.calls), 2),
      formatNumber(s.meanMs, 3),
    ]);
    parts.push(
      `\`${side.name}\`:\n\n${markdownTable(['statement', 'calls per alert', 'rows per call', 'mean ms'], rows)}`,
    );
  }
  if (parts.length === 0) return '';
  return [
    "Statements per alert enqueued (pg_stat_statements of each side's database, the whole run: store phases, drains and latency rounds; the most called first):",
    ...parts,
  ].join('\n\n');
}

/** `--only=redis` / `--only=postgres` / `--only=<side name>`. */
function chosenSides(only: string | undefined, before: BeforeBuild | undefined): SideSpec[] {
  const all = [...SIDES];
  if (before !== undefined) {
    const [redis, postgres] = beforeSides(beforeLabel(before));
    if (redis !== undefined && beforeHas(before, '@churn-risk/core', '@churn-risk/redis'))
      all.splice(1, 0, redis);
    if (postgres !== undefined && beforeHas(before, '@churn-risk/core', '@churn-risk/postgres'))
      all.splice(all.findIndex((s) => s.name === 'ours-postgres') + 1, 0, postgres);
  }
  if (only === undefined) return all;
  const chosen = all.filter((s) => s.engine === only || s.name.includes(only));
  if (chosen.length === 0) throw new Error(`no drain side matches "${only}"`);
  return chosen;
}

export async function runDrain(settings: BenchSettings): Promise<BenchResult> {
  const config = settings.quick ? QUICK : FULL;
  const sides = chosenSides(settings.only, settings.before);
  const engines = (['redis', 'postgres'] as const).filter((e) => sides.some((s) => s.engine === e));
  const binDir = engines.includes('postgres') ? postgresPrerequisite('drain') : undefined;
  const node = prepareNode22();
  const sections: string[] = [];
  const data: Record<string, unknown> = {};
  for (const engine of engines) {
    const engineSides = sides.filter((s) => s.engine === engine);
    let results: Map<string, SideResult>;
    let statements = '';
    if (engine === 'redis') {
      results = await withBenchRedis((redis) =>
        runEngine(
          engine,
          engineSides,
          node,
          { url: () => redis.url, namespace: (side) => `bench-drain-${side}`, pid: redis.pid },
          config,
        ),
      );
    } else {
      const cluster = await startBenchCluster(binDir as string);
      try {
        const database = (side: string): string => `bench_drain_${side.replaceAll('-', '_')}`;
        for (const side of engineSides) await cluster.createDatabase(database(side.name));
        results = await runEngine(
          engine,
          engineSides,
          node,
          {
            url: (side) => cluster.url(database(side)),
            namespace: () => 'churn_risk',
            pid: cluster.server.pid,
          },
          config,
        );
        if (cluster.statements) {
          statements = await statementsMarkdown(engineSides, results, config, (side) =>
            cluster.topStatements(database(side), 6),
          );
        }
      } finally {
        await cluster.stop();
      }
    }
    const summaries = engineSides.map((s) => summarize(s, results.get(s.name) as SideResult));
    data[engine] = Object.fromEntries(results);
    const title = engine === 'redis' ? '#### Redis' : '#### Postgres';
    sections.push(
      `${title}\n\n${engineMarkdown(engine, summaries, engine === 'redis' ? 'redis-server' : 'PostgreSQL')}`,
    );
    if (statements !== '') sections.push(statements);
  }
  const notes = [
    `${String(config.rounds)} interleaved round(s); in each, every side in turn (each round starting with the next side):`,
    `(a) drain: ${num(config.stored.redis)} (Redis) / ${num(config.stored.postgres)} (Postgres) fresh ~300-byte alerts stored with the side's own enqueue`,
    '(ours: signed deliveries into `receiver.handle` of a web process with `consume: false`; BullMQ `queue.add`; graphile-worker `addJob`; pg-boss `send`), 16 in flight,',
    'then one consuming process started and, once it is connected, told to start; timed in it from its first handler start to the N-th (start-up excluded), alerts/s = (N - 1) / that span;',
    `(b) latency: a fresh consuming process, idle, then ${String(config.warmup)} warm-up and ${String(config.alerts)} timed alerts enqueued one every ${String(config.intervalMs)} ms (50/s) by the producing process,`,
    "each carrying the machine's monotonic clock (`process.hrtime`, one clock for every process) read just before its enqueue call; the handler's first line reads the same clock.",
    'Every process on Node 22 (test/node_modules/node22: graphile-worker and pg-boss need it; the same Node for all sides), one redis-server (no persistence) and one PostgreSQL 15 cluster (fsync off) for all sides,',
    'a key prefix (Redis) or a database (Postgres) per side. CPU per alert: the consuming process, and the store server with all its processes (/proc, 10 ms ticks), over the drain span.',
  ].join(' ');
  return {
    name: 'drain',
    title:
      "Processing at the engines' own speed: drain rate and enqueue → handler start, ours against BullMQ, graphile-worker and pg-boss",
    markdown: [...sections, notes].join('\n\n'),
    data,
  };
}
