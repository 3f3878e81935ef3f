/**
 * `pnpm bench invocation`: the time from the `202` to the handler's start in
 * invocation mode (`consume: 'invocation'`: the process that answered runs the alert inside its
 * keep-alive, no worker process) beside worker mode's (a web process with `consume: false` and a
 * worker process with `consume: true`), for `createPostgresQueue` and `createRedisQueue`, at a
 * steady rate, in interleaved rounds on one redis-server and one PostgreSQL 15 cluster. The goal:
 * invocation mode's p50 within 2x worker mode's.
 */
import type { BenchChild } from '../lib/child.js';
import { startChild } from '../lib/child.js';
import { withBenchRedis } from '../lib/bench-redis.js';
import { summarizeLatencies, type LatencySummary } from '../lib/latency-stats.js';
import { MailTimeoutError, mailbox, type Mailbox } from '../lib/mailbox.js';
import { formatNumber, formatRatio, markdownTable, median } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';
import { startBenchCluster } from '../postgres/cluster.js';
import { postgresPrerequisite } from '../postgres/prerequisites.js';

type Engine = 'redis' | 'postgres';
type Mode = 'invocation' | 'worker';

const MODES: readonly Mode[] = ['invocation', 'worker'];

interface InvocationSettings {
  rounds: number;
  /** Per round and side: `warmup` unmeasured deliveries, then `alerts` timed ones. */
  warmup: number;
  alerts: number;
  /** One delivery every `intervalMs` (50 ms: 20 alerts/s). */
  intervalMs: number;
}

const FULL: InvocationSettings = { rounds: 4, warmup: 20, alerts: 100, intervalMs: 50 };
const QUICK: InvocationSettings = { rounds: 1, warmup: 10, alerts: 60, intervalMs: 50 };

/** How long after the last `202` every handler must have started. */
const START_TIMEOUT_MS = 60_000;

interface RoundResult {
  /** `202` → handler start of the timed alerts, ms. */
  delays: number[];
  /** `handle` called → handler start of the same alerts, ms. */
  fromCall: number[];
  /** `handle` called → `202`, ms. */
  answerMs: number[];
  /** Timed alerts answered `202` whose handler did not start in time. */
  missing: number;
  /** Invocation mode: last handler start → last kept promise settled, ms. */
  settledMs?: number;
}

interface SideResult {
  rounds: RoundResult[];
  failed?: string;
}

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Started {
  child: BenchChild<unknown>;
  mail: Mailbox;
}

async function start(
  role: 'web' | 'invocation' | 'worker',
  engine: Engine,
  url: string,
  namespace: string,
): Promise<Started> {
  const child = await startChild<{ error?: string }>('invocation/child.ts', [
    role,
    engine,
    url,
    namespace,
  ]);
  if (typeof child.ready.error === 'string') {
    await child.kill();
    throw new Error(child.ready.error);
  }
  return { child, mail: mailbox(child, `${engine} ${role}`) };
}

interface Done {
  starts: [string, number][];
  settledMs: number;
}

/** The handler starts of `consumer` once `expect` came, or what came within the timeout. */
async function startsOf(consumer: Started): Promise<Done> {
  try {
    return await consumer.mail.take<Done>('done', START_TIMEOUT_MS);
  } catch (error) {
    if (!(error instanceof MailTimeoutError)) throw error;
    consumer.child.send({ report: true });
    const progress = await consumer.mail.take<{ starts: [string, number][] }>('progress', 10_000);
    return { starts: progress.starts, settledMs: Number.NaN };
  }
}

/** One round of one side: fresh processes, `warmup + alerts` deliveries at the steady rate. */
async function measureRound(
  engine: Engine,
  mode: Mode,
  url: string,
  namespace: string,
  settings: InvocationSettings,
): Promise<RoundResult> {
  const total = settings.warmup + settings.alerts;
  const children: Started[] = [];
  try {
    let web: Started;
    let consumer: Started;
    if (mode === 'invocation') {
      web = await start('invocation', engine, url, namespace);
      children.push(web);
      consumer = web;
    } else {
      consumer = await start('worker', engine, url, namespace);
      children.push(consumer);
      web = await start('web', engine, url, namespace);
      children.push(web);
    }
    consumer.child.send({ go: { expect: total } });
    await sleep(300); // the worker's connections and listeners are up
    web.child.send({ steady: { count: total, intervalMs: settings.intervalMs } });
    const sent = await web.mail.take<{ answered: [string, number, number][]; failed: number }>(
      'sent',
      120_000,
    );
    if (sent.failed > 0) throw new Error(`${String(sent.failed)} deliveries not answered 202`);
    const done = await startsOf(consumer);
    const startedAt = new Map(done.starts);
    const delays: number[] = [];
    const fromCall: number[] = [];
    const answerMs: number[] = [];
    let missing = 0;
    for (const [userId, calledAt, answeredAt] of sent.answered.slice(settings.warmup)) {
      answerMs.push(answeredAt - calledAt);
      const at = startedAt.get(userId);
      if (at === undefined) missing++;
      else {
        delays.push(at - answeredAt);
        fromCall.push(at - calledAt);
      }
    }
    return {
      delays,
      fromCall,
      answerMs,
      missing,
      ...(mode === 'invocation' ? { settledMs: done.settledMs } : {}),
    };
  } finally {
    for (const { child, mail } of children) {
      mail.close();
      await child.kill();
    }
  }
}

async function runEngine(
  engine: Engine,
  /** A fresh namespace per round: an alert a killed process left cannot reach a later round. */
  target: (mode: Mode, round: number) => { url: string; namespace: string },
  settings: InvocationSettings,
): Promise<Record<Mode, SideResult>> {
  const results: Record<Mode, SideResult> = { invocation: { rounds: [] }, worker: { rounds: [] } };
  for (let round = 0; round < settings.rounds; round++) {
    for (let k = 0; k < MODES.length; k++) {
      const mode = MODES[(round + k) % MODES.length] as Mode;
      const result = results[mode];
      if (result.failed !== undefined) continue;
      console.error(`invocation: ${engine} round ${String(round + 1)}: ${mode} mode`);
      const { url, namespace } = target(mode, round);
      try {
        result.rounds.push(await measureRound(engine, mode, url, namespace, settings));
      } catch (error) {
        result.failed = describe(error);
        console.error(`invocation: ${engine} ${mode} failed: ${result.failed}`);
      }
    }
  }
  return results;
}

interface Summary {
  latency: LatencySummary;
  fromCall: LatencySummary;
  answer: LatencySummary;
  /** Median over the rounds of each round's p50. */
  roundP50s: number[];
  missing: number;
  settledMs: number;
  failed?: string;
}

function summarize(result: SideResult): Summary {
  return {
    latency: summarizeLatencies(result.rounds.flatMap((r) => r.delays)),
    fromCall: summarizeLatencies(result.rounds.flatMap((r) => r.fromCall)),
    answer: summarizeLatencies(result.rounds.flatMap((r) => r.answerMs)),
    roundP50s: result.rounds.map((r) => summarizeLatencies(r.delays).p50),
    missing: result.rounds.reduce((sum, r) => sum + r.missing, 0),
    settledMs: median(
      result.rounds.map((r) => r.settledMs).filter((v): v is number => v !== undefined),
    ),
    ...(result.failed === undefined ? {} : { failed: result.failed }),
  };
}

const ms = (value: number): string => (Number.isFinite(value) ? formatNumber(value, 1) : 'n/a');
const ratio = (value: number): string => (Number.isFinite(value) ? formatRatio(value) : 'n/a');

/** Median of the per-round ratios invocation p50 / worker p50 (rounds where both were measured). */
function pairedRatio(invocation: Summary, worker: Summary): number {
  return median(
    invocation.roundP50s
      .map((value, i) => value / (worker.roundP50s[i] ?? Number.NaN))
      .filter((r) => Number.isFinite(r)),
  );
}

const LABEL: Record<Engine, string> = { postgres: 'Postgres', redis: 'Redis' };

function engineRows(engine: Engine, summaries: Record<Mode, Summary>): string[][] {
  return MODES.map((mode) => {
    const s = summaries[mode];
    return [
      LABEL[engine],
      mode === 'invocation' ? '**invocation**' : 'worker',
      s.failed === undefined
        ? `${ms(s.latency.p50)} / ${ms(s.latency.p99)}`
        : `failed: ${s.failed.split('\n')[0] ?? ''}`,
      `${ms(s.latency.min)} / ${ms(s.latency.max)}`,
      `${ms(s.fromCall.p50)} / ${ms(s.fromCall.p99)}`,
      `${ms(s.answer.p50)} / ${ms(s.answer.p99)}`,
      s.roundP50s.map(ms).join(', '),
      String(s.latency.count),
      String(s.missing),
      mode === 'invocation' ? ms(s.settledMs) : '',
    ];
  });
}

function verdict(engine: Engine, summaries: Record<Mode, Summary>): string[] {
  const inv = summaries.invocation;
  const worker = summaries.worker;
  const p50 = inv.latency.p50 / worker.latency.p50;
  const met = Number.isFinite(p50) && p50 <= 2 && inv.missing === 0;
  return [
    LABEL[engine],
    `**${ratio(p50)}**`,
    ratio(pairedRatio(inv, worker)),
    ratio(inv.latency.p99 / worker.latency.p99),
    ratio(inv.fromCall.p50 / worker.fromCall.p50),
    Number.isFinite(p50) ? (met ? '**met**' : '**not met**') : 'not measured',
  ];
}

export async function runInvocation(settings: BenchSettings): Promise<BenchResult> {
  const config = settings.quick ? QUICK : FULL;
  const only = settings.only;
  const engines = (['postgres', 'redis'] as const).filter(
    (engine) => only === undefined || engine.includes(only),
  );
  if (engines.length === 0) throw new Error(`no engine matches "${only ?? ''}" (postgres, redis)`);
  const binDir = engines.includes('postgres') ? postgresPrerequisite('invocation') : undefined;
  const rows: string[][] = [];
  const verdicts: string[][] = [];
  const data: Record<string, unknown> = {};
  for (const engine of engines) {
    let results: Record<Mode, SideResult>;
    if (engine === 'redis') {
      results = await withBenchRedis((redis) =>
        runEngine(
          engine,
          (mode, round) => ({
            url: redis.url,
            namespace: `bench-invocation-${mode}-${String(round)}`,
          }),
          config,
        ),
      );
    } else {
      const cluster = await startBenchCluster(binDir as string);
      try {
        const database = (mode: Mode): string => `bench_invocation_${mode}`;
        for (const mode of MODES) await cluster.createDatabase(database(mode));
        results = await runEngine(
          engine,
          (mode, round) => ({
            url: cluster.url(database(mode)),
            namespace: `churn_risk_${String(round)}`,
          }),
          config,
        );
      } finally {
        await cluster.stop();
      }
    }
    const summaries = {
      invocation: summarize(results.invocation),
      worker: summarize(results.worker),
    };
    data[engine] = { results, summaries };
    rows.push(...engineRows(engine, summaries));
    verdicts.push(verdict(engine, summaries));
  }
  const table = markdownTable(
    [
      'store',
      'mode',
      '202 → handler start p50 / p99 (ms)',
      'min / max (ms)',
      '`handle` called → handler start p50 / p99 (ms)',
      '`handle` called → 202 p50 / p99 (ms)',
      'p50 per round (ms)',
      'alerts timed',
      'not started',
      'last start → last kept promise settled (ms, median)',
    ],
    rows,
  );
  const goals = markdownTable(
    [
      'store',
      'invocation p50 / worker p50',
      'paired by round (median)',
      'p99 / p99',
      'from the `handle` call: p50 / p50',
      'goal (issue 33): invocation p50 ≤ 2x worker p50',
    ],
    verdicts,
  );
  const rate = 1000 / config.intervalMs;
  const notes = [
    `${String(config.rounds)} interleaved round(s) per store, the two modes in turn (each round starting with the other one), fresh processes each round;`,
    `in each, ${String(config.warmup)} warm-up and ${String(config.alerts)} timed fresh signed ~250-byte deliveries, one every ${String(config.intervalMs)} ms (${String(rate)} alerts/s),`,
    'handed to `receiver.handle({ method, headers, body, waitUntil })` as a framework adapter would; the time is from `handle` resolving with the `202` to the first line of the no-op handler,',
    "both read on the machine's monotonic clock (`process.hrtime`, one clock for every process of the machine).",
    "**invocation**: one process, `createReceiver({ secret, queue, consume: 'invocation', keepAliveBudgetMs: 10_000 })`, whose `waitUntil` keeps every promise (as `after()` would), no worker process;",
    '**worker**: a web process with `consume: false` and a worker process with `consume: true` (started and connected before the first delivery).',
    '`createPostgresQueue` / `createRedisQueue` with their defaults (concurrency 10); one PostgreSQL 15 cluster (fsync off) with a database per mode and a schema per round, one redis-server (no persistence) with a key prefix per mode and round (the processes are SIGKILLed after each round: an alert whose completion they had not stored cannot reach a later round).',
    "Every process on the machine's Node, `@churn-risk/*` from the built `dist/`.",
    "'not started': timed alerts answered `202` whose handler had not started 60 s later (any makes the goal not met).",
  ].join(' ');
  return {
    name: 'invocation',
    title: "Invocation mode: 202 → handler start against worker mode's (issue 33)",
    markdown: [table, goals, notes].join('\n\n'),
    data,
  };
}
