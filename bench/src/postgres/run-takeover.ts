/**
 * `pnpm bench postgres-takeover`: how long after a worker is SIGKILLed mid-handler another worker
 * starts that alert, with `createPostgresQueue`'s defaults (lockDurationMs 30,000, the reclaim
 * every min(lockDurationMs, 30,000) ms). Several trials run at once, each with its own database,
 * web process and two workers (Node >= 22.12); each trial sends one alert after its own delay
 * (so that it lands at another moment of the workers' reclaim timers) and kills the worker
 * running it after its own delay (another moment of the lease's renewal, every half lease).
 */
import { WEBHOOK_PATH, alertBody, signHeaders } from '../lib/alert.js';
import { startChild, type BenchChild } from '../lib/child.js';
import { formatNumber, markdownTable, median } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';
import { startBenchCluster, type BenchCluster } from './cluster.js';
import { SCHEMA } from './measure.js';
import { benchPrerequisites } from './prerequisites.js';

const LEASE_MS = 30_000;
const RECLAIM_MS = 30_000;
/** Each trial: seconds before its alert is sent, seconds from the handler's start to the kill. */
const TRIALS = [
  { sendAfter: 0, killAfter: 1 },
  { sendAfter: 12, killAfter: 4 },
  { sendAfter: 24, killAfter: 7.5 },
  { sendAfter: 6, killAfter: 11 },
  { sendAfter: 18, killAfter: 14 },
];

interface Start {
  userId: string;
  at: number;
  pid: number;
}

interface TrialResult {
  sendAfter: number;
  killAfter: number;
  /** From the SIGKILL to the other worker's handler start, s. */
  takeover: number;
  /** From the killed handler's start to the other's, s. */
  startToStart: number;
}

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(find: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs / 1000} s`);
    await sleep(20);
  }
}

async function trial(
  cluster: BenchCluster,
  node: string,
  index: number,
  { sendAfter, killAfter }: (typeof TRIALS)[number],
): Promise<TrialResult> {
  const database = `bench_takeover_${index}`;
  await cluster.createDatabase(database);
  const url = cluster.url(database);
  const children: BenchChild<unknown>[] = [];
  try {
    const web = await startChild<{ port: number }>(
      'postgres/server.ts',
      ['express-ours-postgres', url, SCHEMA],
      [],
      node,
    );
    children.push(web);
    const starts: Start[] = [];
    const workers = new Map<number, BenchChild<unknown>>();
    for (let n = 0; n < 2; n++) {
      // Handlers that hold for 10 minutes: the killed one never finishes, the other is timed.
      const worker = await startChild(
        'postgres/worker.ts',
        ['postgres', url, SCHEMA, '600000'],
        [],
        node,
      );
      children.push(worker);
      workers.set(worker.process.pid ?? -1, worker);
      worker.process.on('message', (message: Partial<Start>) => {
        if (typeof message.userId === 'string') starts.push(message as Start);
      });
    }
    await sleep(sendAfter * 1000);
    const body = alertBody();
    const response = await fetch(`http://127.0.0.1:${web.ready.port}${WEBHOOK_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signHeaders(body) },
      body,
    });
    if (response.status !== 202) throw new Error(`trial ${index}: answered ${response.status}`);
    const first = await waitFor(() => starts[0], 60_000, `trial ${index}: no handler started`);
    await sleep(Math.max(0, first.at + killAfter * 1000 - now()));
    const killedAt = now();
    await workers.get(first.pid)?.kill();
    console.error(`takeover: trial ${index} killed worker ${first.pid}`);
    const second = await waitFor(
      () => starts.find((s) => s.pid !== first.pid),
      LEASE_MS + RECLAIM_MS + 60_000,
      `trial ${index}: no other worker started the alert`,
    );
    return {
      sendAfter,
      killAfter,
      takeover: (second.at - killedAt) / 1000,
      startToStart: (second.at - first.at) / 1000,
    };
  } finally {
    await Promise.all(children.map((child) => child.kill()));
  }
}

export async function runTakeover(settings: BenchSettings): Promise<BenchResult> {
  const { binDir, node } = benchPrerequisites();
  const trials = settings.quick ? TRIALS.slice(0, 2) : TRIALS;
  const cluster = await startBenchCluster(binDir);
  let results: TrialResult[];
  try {
    results = await Promise.all(trials.map((t, i) => trial(cluster, node, i, t)));
  } finally {
    await cluster.stop();
  }
  const s = (v: number): string => formatNumber(v, 1);
  const rows = results.map((r, i) => [
    String(i + 1),
    s(r.sendAfter),
    s(r.killAfter),
    s(r.takeover),
    s(r.startToStart),
  ]);
  const takeovers = results.map((r) => r.takeover);
  const summary =
    `Takeover after the SIGKILL: median ${s(median(takeovers))} s, from ${s(Math.min(...takeovers))} ` +
    `to ${s(Math.max(...takeovers))} s over ${results.length} trials. Bound with the defaults: the ` +
    `lease left at the kill, (lockDurationMs / 2, lockDurationMs] = (15, 30] s (renewed every half ` +
    `lease), plus the wait for a surviving worker's next reclaim, [0, reclaimIntervalMs) = [0, 30) s: ` +
    'more than 15 s and at most 60 s after the death (then the take is immediate: a reclaim that ' +
    'put alerts back wakes the worker).';
  return {
    name: 'postgres-takeover',
    title: 'Postgres mode: takeover of an alert whose worker was SIGKILLed mid-handler (defaults)',
    markdown: [
      markdownTable(
        [
          'trial',
          'alert sent after the workers started (s)',
          'SIGKILL after the handler started (s)',
          "SIGKILL to the other worker's handler start (s)",
          'handler start to handler start (s)',
        ],
        rows,
      ),
      summary,
      "Each trial: its own database on one PostgreSQL 15 cluster, a web process (Express, `consume: false`) and two workers (`createPostgresQueue` defaults, concurrency 10) on Node 22, all started at once; the alert is sent after the delay shown, the worker whose handler started it is SIGKILLed after the delay shown, and the other worker's handler start is timed on the wall clock.",
    ].join('\n\n'),
    data: { results },
  };
}
