/**
 * The multi-process Redis scenario: web processes that only accept (`consume: false`), worker
 * processes that run the handler, on one redis-server or (`redisCluster: true`) on a real
 * three-master Redis Cluster; alerts sent over HTTP, some redelivered to another web process; one
 * worker killed with SIGKILL partway and started again.
 */
import {
  startRedisCluster,
  startRedisServer,
  type RedisCluster,
  type RedisServer,
} from '@churn-risk/redis/testing';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnTs, type NodeProcess } from '../support/node-process.js';
import {
  SECRET,
  WEB_SCRIPT,
  WORKER_SCRIPT,
  deliveryOf,
  freshAlert,
  readLog,
  tempLog,
} from '../redis/fixtures.js';
import { keepAliveAgent, runPool, send } from './http-pool.js';
import { seededRandom } from './seeded-random.js';

export interface ClusterOptions {
  alerts: number;
  webs: number;
  workers: number;
  redeliveryRate: number;
  /**
   * SIGKILL one worker once this many first deliveries were answered: the worker that runs one of
   * the `HOLDS` alerts sent just before, whose handler takes `HOLD_MS`, so that the kill surely
   * lands mid-handler however slow the machine is.
   */
  killAfter: number;
  seed: number;
  /** Run on a three-master Redis Cluster (prefix `{cluster}`) instead of one redis-server. */
  redisCluster?: boolean;
}

/** What the scenario observed. */
export interface ClusterReport {
  accepted: string[];
  refused: number;
  redelivered: number;
  duplicatesAnswered: number;
  redeliveriesNotDuplicate: string[];
  killedPid: number;
  /** Each alert id with the [kind, pid] lines of its handler runs, in log order. */
  runs: Map<string, [string, string][]>;
  workerExitCodes: (number | null)[];
  webExitCodes: (number | null)[];
}

const WORKER_ENV = { LEASE_MS: '2000', CONCURRENCY: '16', WORK_MS: '10', HOLD_MS: '3000' };
/** How many alerts (user ids `hold_…`) just before the kill take HOLD_MS instead of WORK_MS. */
const HOLDS = 8;

/** Runs the scenario and tears everything down, also on failure. */
export async function runCluster(options: ClusterOptions): Promise<ClusterReport> {
  const log = tempLog('cluster');
  const processes: NodeProcess[] = [];
  let redis: RedisServer | undefined;
  let redisCluster: RedisCluster | undefined;
  const agent = keepAliveAgent(32);
  try {
    let base: Record<string, string>;
    if (options.redisCluster === true) {
      redisCluster = await startRedisCluster();
      const nodes = JSON.stringify(redisCluster.nodes);
      base = {
        REDIS_URL: 'redis://unused',
        REDIS_CLUSTER_NODES: nodes,
        PREFIX: '{cluster}',
        SECRET,
      };
    } else {
      redis = await startRedisServer();
      base = { REDIS_URL: redis.url, PREFIX: 'cluster', SECRET };
    }
    const worker = (n: number): NodeProcess => {
      const child = spawnTs(WORKER_SCRIPT, {
        ...base,
        ...WORKER_ENV,
        LOG_FILE: join(log.dir, `worker-${n}.log`),
      });
      processes.push(child);
      return child;
    };
    const webs = Array.from({ length: options.webs }, () => spawnTs(WEB_SCRIPT, base));
    processes.push(...webs);
    await Promise.all(webs.map((web) => web.waitForLines(/^listening on /)));
    const urls = webs.map(
      (web) => `${(web.lines[0] ?? '').slice('listening on '.length)}/webhooks`,
    );
    const workers = Array.from({ length: options.workers }, (_, n) => worker(n));
    await Promise.all(workers.map((w) => w.waitForLines(/^worker ready/)));

    const random = seededRandom(options.seed);
    const plan = Array.from({ length: options.alerts }, (_, i) => ({
      ...freshAlert(i >= options.killAfter - HOLDS && i < options.killAfter ? 'hold' : 'cluster'),
      web: i % options.webs,
      redeliver: random() < options.redeliveryRate,
    }));
    const accepted: string[] = [];
    let refused = 0;
    let answered = 0;
    let killedPid = -1;
    let restart: Promise<void> | undefined;
    const later: { alert: Record<string, unknown>; id: string; web: number }[] = [];
    let next = 0;
    await runPool(
      32,
      () => plan[next++],
      async (item) => {
        const answer = await send(agent, urls[item.web] ?? '', deliveryOf(item.alert));
        if (answer.status === 202) accepted.push(item.id);
        else refused += 1;
        if (item.redeliver) later.push({ ...item, web: (item.web + 1) % options.webs });
        answered += 1;
        if (answered === options.killAfter) {
          const logs = workers.map((_, n) => join(log.dir, `worker-${n}.log`));
          restart = killMidHandler(workers, logs).then((pid) => {
            killedPid = pid;
            const again = worker(options.workers);
            return again.waitForLines(/^worker ready/);
          });
        }
      },
    );
    let duplicatesAnswered = 0;
    const redeliveriesNotDuplicate: string[] = [];
    let r = 0;
    await runPool(
      32,
      () => later[r++],
      async (item) => {
        const answer = await send(agent, urls[item.web] ?? '', deliveryOf(item.alert));
        if (answer.status === 202 && answer.body.includes('"duplicate":true'))
          duplicatesAnswered += 1;
        else redeliveriesNotDuplicate.push(`${item.id}: ${answer.status} ${answer.body}`);
      },
    );
    await restart;

    await waitUntilAllDone(log.dir, accepted);
    const alive = processes.filter((p) => p.pid !== killedPid);
    for (const p of alive) p.kill('SIGTERM');
    const codes = await Promise.all(alive.map((p) => p.exited));
    const workerCodes = codes.slice(options.webs);
    return {
      accepted,
      refused,
      redelivered: later.length,
      duplicatesAnswered,
      redeliveriesNotDuplicate,
      killedPid,
      runs: collectRuns(log.dir),
      workerExitCodes: workerCodes,
      webExitCodes: codes.slice(0, options.webs),
    };
  } finally {
    agent.destroy();
    for (const p of processes) p.kill('SIGKILL');
    await redis?.stop();
    redis?.cleanup();
    await redisCluster?.stop();
    log.remove();
  }
}

/**
 * SIGKILLs the first of `workers` whose log shows a `hold_` alert's handler started and not finished
 * (it has seconds left to run, so the kill lands mid-handler). After 30 s without one it kills the
 * first worker anyway, and the test's "killed mid-handler" check fails.
 */
export async function killMidHandler(workers: NodeProcess[], logFiles: string[]): Promise<number> {
  const holding = (file: string): boolean => {
    const open = new Set<string>();
    for (const [kind, id] of readLog(file)) {
      if (!id.startsWith('hold_')) continue;
      if (kind === 'start') open.add(id);
      else open.delete(id);
    }
    return open.size > 0;
  };
  const until = Date.now() + 30_000;
  let victim = workers[0] as NodeProcess;
  for (;;) {
    const index = logFiles.findIndex(holding);
    if (index >= 0) {
      victim = workers[index] as NodeProcess;
      break;
    }
    if (Date.now() > until) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  victim.kill('SIGKILL');
  await victim.exited;
  return victim.pid;
}

/**
 * Waits until every alert of `accepted` has finished at least once (a `done` line in the worker
 * logs of `dir`, read every 200 ms), or gives up after `timeoutMs`: the verdict is the caller's,
 * from `collectRuns`.
 */
export async function waitUntilAllDone(
  dir: string,
  accepted: readonly string[],
  timeoutMs = 180_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const seen = collectRuns(dir);
    if (accepted.every((id) => seen.get(id)?.some(([kind]) => kind === 'done'))) return;
    if (Date.now() > until) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Each alert id with the [kind, pid] of its handler runs, from the worker logs of `dir`. */
export function collectRuns(dir: string): Map<string, [string, string][]> {
  const runs = new Map<string, [string, string][]>();
  for (const name of readdirSync(dir).sort()) {
    for (const [kind, id, pid] of readLog(join(dir, name))) {
      const list = runs.get(id) ?? [];
      list.push([kind, pid]);
      runs.set(id, list);
    }
  }
  return runs;
}
