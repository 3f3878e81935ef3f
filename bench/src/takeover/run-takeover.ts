/**
 * `pnpm bench takeover` (issue 35): how long after a consumer dies mid-handler another consumer
 * starts its alert, against the bound the READMEs state, `leaseMs + reclaimIntervalMs`. For the
 * memory store (core's `createMemoryStore` + `createDurableQueue`, in this process: a kill is a
 * taker that stops answering), Redis and Postgres (consuming processes SIGKILLed mid-handler);
 * with 1 and with 3 consumers left after each kill; the alert sent and the kill made at random
 * points of the reclaim cycles and of the lease's renewals. Short settings (lease 2 s, reclaim
 * every 2 s: bound 4 s) so that a run takes minutes: the ratio to the bound is what carries over
 * to the defaults (30 s + 30 s).
 */
import { withBenchRedis } from '../lib/bench-redis.js';
import { formatNumber, markdownTable, median } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';
import { startBenchCluster } from '../postgres/cluster.js';
import { postgresPrerequisite } from '../postgres/prerequisites.js';
import { runKills, seededRandom, type Fleet, type Trial } from './fleet.js';
import { memoryFleet } from './memory-fleet.js';
import { processFleet } from './process-fleet.js';

type Store = 'memory' | 'redis' | 'postgres';

const LEASE_MS = 2_000;
const RECLAIM_INTERVAL_MS = 2_000;
const BOUND_MS = LEASE_MS + RECLAIM_INTERVAL_MS;
/** Consumers left after each kill. */
const SURVIVORS = [1, 3] as const;

interface ConfigResult {
  store: Store;
  survivors: number;
  trials: Trial[];
  failed?: string;
}

const describe = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

async function measureConfig(
  store: Store,
  survivors: number,
  kills: number,
  seed: number,
  fleet: () => Fleet,
): Promise<ConfigResult> {
  const log = (message: string): void => {
    console.error(`takeover: ${store}, ${String(survivors)} left: ${message}`);
  };
  try {
    const trials = await runKills(
      fleet(),
      {
        survivors,
        kills,
        leaseMs: LEASE_MS,
        reclaimIntervalMs: RECLAIM_INTERVAL_MS,
        random: seededRandom(seed),
      },
      log,
    );
    return { store, survivors, trials };
  } catch (error) {
    log(`failed: ${describe(error)}`);
    return { store, survivors, trials: [], failed: describe(error) };
  }
}

/** Both configurations of a store at once (their own key prefix or database each). */
function bothConfigs(
  store: Store,
  kills: number,
  seed: number,
  fleetOf: (survivors: number) => Fleet,
): Promise<ConfigResult[]> {
  return Promise.all(
    SURVIVORS.map((survivors) =>
      measureConfig(store, survivors, kills, seed + survivors, () => fleetOf(survivors)),
    ),
  );
}

const s2 = (ms: number): string => (Number.isFinite(ms) ? formatNumber(ms / 1000, 2) : 'n/a');
const x2 = (value: number): string => (Number.isFinite(value) ? `${value.toFixed(2)}x` : 'n/a');

function resultsTable(results: readonly ConfigResult[]): string {
  const rows = results.map((r) => {
    const takeovers = r.trials.map((t) => t.takeoverMs);
    if (r.failed !== undefined && takeovers.length === 0) {
      return [r.store, String(r.survivors + 1), String(r.survivors), '0', `failed: ${r.failed}`];
    }
    const max = Math.max(...takeovers);
    const mid = median(takeovers);
    const within = takeovers.filter((t) => t <= BOUND_MS).length;
    return [
      r.store,
      String(r.survivors + 1),
      String(r.survivors),
      String(takeovers.length),
      `${s2(Math.min(...takeovers))} / ${s2(mid)} / ${s2(max)}`,
      `${x2(mid / BOUND_MS)} / ${x2(max / BOUND_MS)}`,
      `${String(within)} of ${String(takeovers.length)}`,
      s2(median(r.trials.map((t) => t.startToStartMs))),
      r.failed === undefined ? '' : `stopped: ${r.failed}`,
    ];
  });
  return markdownTable(
    [
      'store',
      'consumers before the kill',
      'left after it',
      'kills',
      'kill → other handler start, min / median / max (s)',
      'median / max ÷ bound',
      'within the bound',
      'start → start, median (s)',
      'note',
    ],
    rows,
  );
}

export async function runTakeover(settings: BenchSettings): Promise<BenchResult> {
  const kills = settings.quick ? 3 : 12;
  const only = settings.only;
  const stores = (['memory', 'redis', 'postgres'] as const).filter(
    (store) => only === undefined || store.includes(only),
  );
  if (stores.length === 0) throw new Error(`no takeover store matches "${only ?? ''}"`);
  const binDir = stores.includes('postgres') ? postgresPrerequisite('takeover') : undefined;
  const seed = Number(process.env.BENCH_SEED ?? Date.now() % 1_000_000);
  const node = process.execPath;
  const results: ConfigResult[] = [];
  for (const store of stores) {
    if (store === 'memory') {
      results.push(
        ...(await bothConfigs(store, kills, seed, () =>
          memoryFleet(LEASE_MS, RECLAIM_INTERVAL_MS),
        )),
      );
    } else if (store === 'redis') {
      results.push(
        ...(await withBenchRedis((redis) =>
          bothConfigs(store, kills, seed, (survivors) =>
            processFleet({
              engine: 'redis',
              url: redis.url,
              namespace: `bench-takeover-${String(survivors)}`,
              leaseMs: LEASE_MS,
              reclaimIntervalMs: RECLAIM_INTERVAL_MS,
              node,
            }),
          ),
        )),
      );
    } else {
      const cluster = await startBenchCluster(binDir as string);
      try {
        for (const survivors of SURVIVORS) {
          await cluster.createDatabase(`bench_takeover_${String(survivors)}`);
        }
        results.push(
          ...(await bothConfigs(store, kills, seed, (survivors) =>
            processFleet({
              engine: 'postgres',
              url: cluster.url(`bench_takeover_${String(survivors)}`),
              namespace: 'churn_risk',
              leaseMs: LEASE_MS,
              reclaimIntervalMs: RECLAIM_INTERVAL_MS,
              node,
            }),
          )),
        );
      } finally {
        await cluster.stop();
      }
    }
  }
  const notes = [
    `\`leaseMs\` ${formatNumber(LEASE_MS)}, \`reclaimIntervalMs\` ${formatNumber(RECLAIM_INTERVAL_MS)}: the bound the READMEs state,`,
    `\`leaseMs + reclaimIntervalMs\`, is ${s2(BOUND_MS)} s here (60 s with the defaults, 30 s + 30 s: read the ratio to the bound).`,
    "Each kill: a wait drawn in [0, reclaimIntervalMs) (the alert lands at a random point of the consumers' reclaim cycles), one fresh signed alert accepted",
    "by a random live consumer's receiver, the kill of the consumer whose handler started it after a delay drawn in [0, leaseMs) (a random point of the",
    "lease's renewals, every half lease), then the time until another consumer's handler starts it (the machine's monotonic clock, `process.hrtime`, one clock for every process),",
    'and a fresh consumer started in place of the killed one before the next kill. Handlers hold until told to return. Redis and Postgres: every consumer',
    `is its own process (\`createReceiver\` with \`createRedisQueue\` / \`createPostgresQueue\`, concurrency 10, on this Node, ${process.version}) and a kill is`,
    'a SIGKILL mid-handler; one redis-server / one PostgreSQL 15 cluster, a key prefix / database per configuration, the two configurations of a store at once.',
    "Memory: `createMemoryStore` and one `createDurableQueue` per consumer in this process; a kill makes that consumer's calls to the store never settle",
    `(no renewal, no verdict, no take), as a taker that froze or died. Seed of the random points: ${String(seed)} (\`BENCH_SEED\` replays it).`,
  ].join(' ');
  return {
    name: 'takeover',
    title:
      "Takeover of a dead consumer's alert against the stated bound leaseMs + reclaimIntervalMs",
    markdown: [resultsTable(results), notes].join('\n\n'),
    data: { leaseMs: LEASE_MS, reclaimIntervalMs: RECLAIM_INTERVAL_MS, seed, results },
  };
}
