/**
 * The database's cost of processing alerts (the other half of an alert's life after its accept):
 * one consuming process (`worker.ts`, the queue's defaults, concurrency 10, a handler that returns
 * at once) drains the alerts a web process left in its database; after the first `warmup`
 * handler starts, the cluster's CPU time, WAL and statements and the worker's CPU time are read
 * around `seconds` of draining.
 */
import { childCpuMicros } from '../lib/child-cpu.js';
import { startChild } from '../lib/child.js';
import { counterDelta } from '../lib/queue-measure.js';
import { treeCpuMicros } from '../next/process-tree.js';
import type { BenchCluster } from './cluster.js';
import { SCHEMA, waitingAlerts } from './measure.js';

export interface ProcessingCost {
  /** Handler starts in the measured window, and per second. */
  processed: number;
  perSecond: number;
  /** Per processed alert: the cluster's CPU (µs), the worker's CPU (µs), and the store's counters. */
  storeCpu: number;
  workerCpu: number;
  store: Record<string, number>;
  /** Alerts still waiting when the window ended (0: the drain ran dry, the rate is a floor). */
  left: number;
  /**
   * `pg_stat_database` over the worker's whole life (start-up included, read once it exited):
   * commits, rows inserted / updated / deleted, per handler start.
   */
  totals: Record<string, number>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function measureProcessingCost(
  cluster: BenchCluster,
  node: string,
  database: string,
  { seconds, warmup }: { seconds: number; warmup: number },
): Promise<ProcessingCost> {
  await cluster.settled(database);
  const totalsBefore = await cluster.totals(database);
  const worker = await startChild<{ ready: true }>(
    'postgres/worker.ts',
    ['postgres', cluster.url(database), SCHEMA],
    [],
    node,
  );
  let started = 0;
  worker.process.on('message', (message: { userId?: unknown }) => {
    if (typeof message.userId === 'string') started++;
  });
  try {
    const deadline = Date.now() + 60_000;
    while (started < warmup) {
      if (Date.now() > deadline) throw new Error(`the worker started ${started} alerts in 60 s`);
      await sleep(20);
    }
    const before = {
      count: started,
      at: Date.now(),
      store: treeCpuMicros(cluster.server.pid),
      worker: await childCpuMicros(worker),
      counters: await cluster.counters(database),
    };
    await sleep(seconds * 1000);
    const counters = counterDelta(before.counters, await cluster.counters(database));
    const storeCpu = treeCpuMicros(cluster.server.pid) - before.store;
    const workerCpu = (await childCpuMicros(worker)) - before.worker;
    const processed = started - before.count;
    const left = await waitingAlerts(cluster, database, false);
    const per = (value: number): number => (processed > 0 ? value / processed : Number.NaN);
    await worker.kill();
    await cluster.settled(database); // its backends flushed their statistics as they exited
    const totals = counterDelta(totalsBefore, await cluster.totals(database));
    return {
      totals: Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, v / started])),
      processed,
      perSecond: (processed * 1000) / (Date.now() - before.at),
      storeCpu: per(storeCpu),
      workerCpu: per(workerCpu),
      store: Object.fromEntries(Object.entries(counters).map(([k, v]) => [k, per(v)])),
      left,
    };
  } finally {
    await worker.kill();
  }
}
