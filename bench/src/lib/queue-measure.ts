/**
 * The measuring loop of the durable-queue benchmarks (`pnpm bench redis`, `pnpm bench postgres`):
 * each server in its own child process against the run's store server (redis-server, a PostgreSQL
 * cluster), autocannon in this process, rounds interleaved, the CPU time of the server child (IPC)
 * and of the store server's process tree (/proc) read around each round, and every 202 counted
 * against the jobs the server left in the store.
 */
import { alertBody, signHeaders, WEBHOOK_PATH } from './alert.js';
import { childCpuMicros } from './child-cpu.js';
import { startChild, type BenchChild } from './child.js';
import { interleaveRounds } from './interleave.js';
import type { MeasuredRound } from './load-summary.js';
import { signedLoad, type LoadResult } from './signed-load.js';
import { formatNumber } from './table.js';
import { treeCpuMicros } from '../next/process-tree.js';

export interface QueueRound extends MeasuredRound {
  /** The store server's CPU time (its whole process tree) during the round per answered request, µs. */
  storeCpuPerRequest: number;
  /** The store's own counters (`QueueBackend.counters`) during the round, per answered request. */
  store: Record<string, number>;
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

/** The store the servers write to, and how the servers are started against it. */
export interface QueueBackend {
  /** The child entry (relative to bench/src) and its arguments for server `name`. */
  serverFile: string;
  serverArgs(name: string): string[];
  /** The Node binary of the server children; this one by default. */
  execPath?: string;
  /** The store server's pid: its process tree's CPU time is the store's. */
  pid: number;
  /** Whether server `name` writes to the store (the others keep alerts in memory). */
  usesStore(name: string): boolean;
  /** The jobs server `name` left waiting in the store. */
  storedJobs(name: string): Promise<number>;
  /** Counters of the store read before and after each round of server `name` (WAL bytes...). */
  counters?(name: string): Promise<Record<string, number>>;
}

async function post(url: string, body: string, secret?: string): Promise<string> {
  const headers = { 'content-type': 'application/json', ...signHeaders(body, secret) };
  const response = await fetch(url, { method: 'POST', headers, body });
  return `${response.status} ${await response.text()}`;
}

/** A signed delivery gets 202, the same again 202 duplicate, a forged one 401. */
export async function checkServer(name: string, port: number): Promise<void> {
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

/** "name: N jobs in <store> for M counted 202s (ok)": each load may leave `connections` uncounted. */
export function jobsNote(
  name: string,
  count: JobCount | undefined,
  connections: number,
  store: string,
): string {
  if (count === undefined) return '';
  const extra = count.stored - count.answered;
  const ok = extra >= 0 && extra <= count.loads * connections;
  return `${name}: ${formatNumber(count.stored)} jobs in ${store} for ${formatNumber(count.answered)} counted 202s (${ok ? 'ok' : 'MISMATCH'})`;
}

const accepted = (load: LoadResult): number => load.statuses['202'] ?? 0;

/** `after - before` for every counter of `after`. */
export function counterDelta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after).map(([key, value]) => [key, value - (before[key] ?? 0)]),
  );
}

type Child = BenchChild<{ port: number }>;

/** Starts every server, checks it, warms it up, then measures interleaved rounds; kills them after. */
export async function measureQueueServers(
  names: readonly string[],
  options: MeasureOptions,
  backend: QueueBackend,
): Promise<{ rounds: Map<string, QueueRound[]>; jobs: Map<string, JobCount> }> {
  const { connections, duration } = options;
  const children = new Map<string, Child>();
  const jobs = new Map<string, JobCount>();
  const child = (name: string): Child => children.get(name) as Child;
  const load = async (name: string, seconds: number): Promise<LoadResult> => {
    const result = await signedLoad(child(name).ready.port, { connections, duration: seconds });
    if (!backend.usesStore(name)) return result;
    const count = jobs.get(name) ?? { stored: 0, answered: 1, loads: 0 }; // 1: the check
    jobs.set(name, {
      ...count,
      answered: count.answered + accepted(result),
      loads: count.loads + 1,
    });
    return result;
  };
  const counters = async (name: string): Promise<Record<string, number>> =>
    backend.counters === undefined ? {} : backend.counters(name);
  try {
    for (const name of names) {
      const started = await startChild<{ port: number }>(
        backend.serverFile,
        backend.serverArgs(name),
        [],
        backend.execPath,
      );
      children.set(name, started);
      await checkServer(name, started.ready.port);
    }
    for (const name of names) {
      console.error(`warm-up ${name}`);
      await load(name, options.warmup);
    }
    const rounds = await interleaveRounds(names, options.rounds, async (name, round) => {
      console.error(`round ${round + 1}/${options.rounds} ${name}`);
      const cpuBefore = await childCpuMicros(child(name));
      const storeBefore = treeCpuMicros(backend.pid);
      const countersBefore = await counters(name);
      const result = await load(name, duration);
      const cpu = (await childCpuMicros(child(name))) - cpuBefore;
      const storeCpu = treeCpuMicros(backend.pid) - storeBefore;
      const delta = counterDelta(countersBefore, await counters(name));
      const per = (value: number): number => (result.total > 0 ? value / result.total : 0);
      return {
        ...result,
        cpuPerRequest: per(cpu),
        storeCpuPerRequest: per(storeCpu),
        store: Object.fromEntries(Object.entries(delta).map(([key, value]) => [key, per(value)])),
      };
    });
    for (const name of names.filter((n) => backend.usesStore(n))) {
      const count = jobs.get(name) as JobCount;
      jobs.set(name, { ...count, stored: await backend.storedJobs(name) });
    }
    return { rounds, jobs };
  } finally {
    await Promise.all([...children.values()].map((c) => c.kill()));
  }
}
