/**
 * The time from the `202` to a handler's start, Postgres mode beside Redis mode in the same run:
 * for each mode a web process (`express-ours-*`, `consume: false`) and a consuming process
 * (`worker.ts`, the queue's defaults), all on Node >= 22.12. This process sends fresh signed
 * alerts one at a time (the next `gapMs` after the previous 202), records the machine clock when
 * each 202 arrives, and the worker reports the same clock at its handler's first line. Rounds
 * alternate the modes.
 */
import { alertBody, signHeaders, WEBHOOK_PATH } from '../lib/alert.js';
import { startChild, type BenchChild } from '../lib/child.js';
import { interleaveRounds } from '../lib/interleave.js';
import { pairDelays } from '../lib/latency-stats.js';
import type { BenchCluster } from './cluster.js';
import { SCHEMA } from './measure.js';
import { machineClock } from '../lib/clock.js';

export type Mode = 'postgres' | 'redis';

export interface StartLatencyOptions {
  cluster: BenchCluster;
  redisUrl: string;
  /** The Node of the web and worker processes. */
  node: string;
  rounds: number;
  /** Alerts per mode per round. */
  alerts: number;
  /** Pause between a 202 and the next send, in ms. */
  gapMs: number;
}

export interface StartLatencies {
  /** Delay from each 202 to its handler's start, ms, per mode (all rounds). */
  delays: Map<Mode, number[]>;
  /** Alerts whose 202 or handler start was not seen. */
  unmatched: Map<Mode, number>;
  /** Alerts per second each mode was sent at (median over its rounds). */
  rates: Map<Mode, number[]>;
}

interface Started {
  userId: string;
  at: number;
}

const DATABASE = 'bench_latency';
const PREFIX = 'bench-latency';

async function send(port: number): Promise<{ userId: string; at: number }> {
  const body = alertBody();
  const response = await fetch(`http://127.0.0.1:${port}${WEBHOOK_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signHeaders(body) },
    body,
  });
  const at = machineClock();
  await response.text();
  if (response.status !== 202) throw new Error(`expected 202, got ${response.status}`);
  return { userId: (JSON.parse(body) as { userId: string }).userId, at };
}

/** Resolves once every id of `ids` is in `started` (rejects after `timeoutMs`). */
async function waitForStarts(
  ids: readonly string[],
  started: ReadonlyMap<string, number>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ids.every((id) => started.has(id))) {
    if (Date.now() > deadline) throw new Error('a handler did not start within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export async function measureStartLatency(options: StartLatencyOptions): Promise<StartLatencies> {
  const { cluster, node } = options;
  await cluster.createDatabase(DATABASE);
  const target: Record<Mode, { url: string; namespace: string; server: string }> = {
    postgres: { url: cluster.url(DATABASE), namespace: SCHEMA, server: 'postgres/server.ts' },
    redis: { url: options.redisUrl, namespace: PREFIX, server: 'redis/server.ts' },
  };
  const children: BenchChild<unknown>[] = [];
  const starts = new Map<Mode, Map<string, number>>();
  const webs = new Map<Mode, number>();
  try {
    for (const mode of ['postgres', 'redis'] as const) {
      const { url, namespace, server } = target[mode];
      const web = await startChild<{ port: number }>(
        server,
        [`express-ours-${mode}`, url, namespace],
        [],
        node,
      );
      children.push(web);
      webs.set(mode, web.ready.port);
      const worker = await startChild<{ ready: true }>(
        'postgres/worker.ts',
        [mode, url, namespace],
        [],
        node,
      );
      children.push(worker);
      const seen = new Map<string, number>();
      starts.set(mode, seen);
      worker.process.on('message', (message: Started) => {
        if (typeof message.userId === 'string') seen.set(message.userId, message.at);
      });
    }
    const runMode = async (mode: Mode, count: number) => {
      const port = webs.get(mode) as number;
      const accepted = new Map<string, number>();
      const began = Date.now();
      for (let i = 0; i < count; i++) {
        const { userId, at } = await send(port);
        accepted.set(userId, at);
        if (options.gapMs > 0) await new Promise((resolve) => setTimeout(resolve, options.gapMs));
      }
      const rate = (count * 1000) / (Date.now() - began);
      const seen = starts.get(mode) as Map<string, number>;
      await waitForStarts([...accepted.keys()], seen);
      return { accepted, rate, seen };
    };
    // Warm-up: both pipelines (schema creation, JIT) before anything counts.
    for (const mode of ['postgres', 'redis'] as const) await runMode(mode, 20);
    const modes: Mode[] = ['postgres', 'redis'];
    const measured = await interleaveRounds(modes, options.rounds, async (mode, round) => {
      console.error(`202 to handler start: round ${round + 1}/${options.rounds} ${mode}`);
      const { accepted, rate, seen } = await runMode(mode as Mode, options.alerts);
      const own = new Map([...accepted.keys()].map((id) => [id, seen.get(id) as number]));
      return { ...pairDelays(accepted, own), rate };
    });
    const pick = <T>(f: (r: { delays: number[]; unmatched: number; rate: number }) => T) =>
      new Map(modes.map((mode) => [mode, (measured.get(mode) ?? []).map(f)]));
    return {
      delays: new Map([...pick((r) => r.delays)].map(([mode, all]) => [mode, all.flat()])),
      unmatched: new Map(
        [...pick((r) => r.unmatched)].map(([mode, all]) => [mode, all.reduce((a, b) => a + b, 0)]),
      ),
      rates: pick((r) => r.rate),
    };
  } finally {
    await Promise.all(children.map((child) => child.kill()));
  }
}
