/**
 * Runs the servers of servers.ts against one redis-server started for the run: each server in its
 * own child process with its own key prefix, autocannon in this one, rounds interleaved, CPU time
 * of the server child (IPC) and of redis-server (/proc) read around each round.
 */
import { Queue } from 'bullmq';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { alertBody, signHeaders, WEBHOOK_PATH } from '../lib/alert.js';
import { childCpuMicros } from '../lib/child-cpu.js';
import { startChild, type BenchChild } from '../lib/child.js';
import { interleaveRounds } from '../lib/interleave.js';
import type { MeasuredRound } from '../lib/load-summary.js';
import { signedLoad, type LoadResult } from '../lib/signed-load.js';
import { treeCpuMicros } from '../next/process-tree.js';

export interface RedisRound extends MeasuredRound {
  /** redis-server's CPU time during the round per answered request, in µs. */
  redisCpuPerRequest: number;
}

export interface MeasureOptions {
  connections: number;
  rounds: number;
  /** Seconds of load per server per round, and before the first round. */
  duration: number;
  warmup: number;
}

/** Jobs a server left in its queue, against the 202 answers it gave: every delivery fresh. */
export interface JobCount {
  stored: number;
  answered: number;
  /** Load runs: each may leave up to `connections` requests sent but not counted. */
  loads: number;
}

type Child = BenchChild<{ port: number }>;

const prefixOf = (name: string): string => `bench-${name}`;
const usesRedis = (name: string): boolean => !name.endsWith('-memory');

async function post(url: string, body: string, secret?: string): Promise<string> {
  const headers = { 'content-type': 'application/json', ...signHeaders(body, secret) };
  const response = await fetch(url, { method: 'POST', headers, body });
  return `${response.status} ${await response.text()}`;
}

/** A signed delivery gets 202, the same again 202 duplicate, a forged one 401. */
async function checkServer(name: string, port: number): Promise<void> {
  const url = `http://127.0.0.1:${port}${WEBHOOK_PATH}`;
  const body = alertBody();
  const answers = [await post(url, body), await post(url, body), await post(url, body, 'forged')];
  const [first = '', again = '', forged = ''] = answers;
  const ok =
    /^202 /.test(first) &&
    !first.includes('duplicate') &&
    /^202 .*"duplicate":true/.test(again) &&
    forged.startsWith('401 ');
  if (!ok) throw new Error(`${name}: unexpected answers ${JSON.stringify(answers)}`);
}

async function storedJobs(redis: RedisServer, name: string): Promise<number> {
  const queue = new Queue('alerts', {
    connection: { host: '127.0.0.1', port: redis.port },
    prefix: prefixOf(name),
  });
  try {
    return await queue.getWaitingCount();
  } finally {
    await queue.close();
  }
}

const accepted = (load: LoadResult): number => load.statuses['202'] ?? 0;

export async function measureRedisServers(
  names: readonly string[],
  options: MeasureOptions,
): Promise<{ rounds: Map<string, RedisRound[]>; jobs: Map<string, JobCount> }> {
  const { connections, duration } = options;
  const redis = await startRedisServer();
  const killRedis = (): void => {
    try {
      redis.signal('SIGKILL'); // this process exits midway (Ctrl-C: lib/child.ts exits)
    } catch {
      // already gone
    }
  };
  process.once('exit', killRedis);
  const children = new Map<string, Child>();
  const jobs = new Map<string, JobCount>();
  const child = (name: string): Child => children.get(name) as Child;
  const load = async (name: string, seconds: number): Promise<LoadResult> => {
    const result = await signedLoad(child(name).ready.port, { connections, duration: seconds });
    if (!usesRedis(name)) return result;
    const count = jobs.get(name) ?? { stored: 0, answered: 1, loads: 0 }; // 1: the check
    jobs.set(name, {
      ...count,
      answered: count.answered + accepted(result),
      loads: count.loads + 1,
    });
    return result;
  };
  try {
    for (const name of names) {
      const started = await startChild<{ port: number }>('redis/server.ts', [
        name,
        redis.url,
        prefixOf(name),
      ]);
      children.set(name, started);
      await checkServer(name, started.ready.port);
    }
    for (const name of names) {
      console.error(`redis: warm-up ${name}`);
      await load(name, options.warmup);
    }
    const rounds = await interleaveRounds(names, options.rounds, async (name, round) => {
      console.error(`redis: round ${round + 1}/${options.rounds} ${name}`);
      const [cpuBefore, redisBefore] = [
        await childCpuMicros(child(name)),
        treeCpuMicros(redis.pid),
      ];
      const result = await load(name, duration);
      const cpu = (await childCpuMicros(child(name))) - cpuBefore;
      const redisCpu = treeCpuMicros(redis.pid) - redisBefore;
      const per = (micros: number): number => (result.total > 0 ? micros / result.total : 0);
      return { ...result, cpuPerRequest: per(cpu), redisCpuPerRequest: per(redisCpu) };
    });
    for (const name of names.filter(usesRedis)) {
      const count = jobs.get(name) as JobCount;
      jobs.set(name, { ...count, stored: await storedJobs(redis, name) });
    }
    return { rounds, jobs };
  } finally {
    await Promise.all([...children.values()].map((c) => c.kill()));
    await redis.stop();
    redis.cleanup();
    process.off('exit', killRedis);
  }
}
