import { startChild } from '../lib/child.js';
import { signedLoad, statusSummary, type LoadResult } from '../lib/signed-load.js';
import { formatNumber, formatRatio, markdownTable, median } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';

const CONNECTIONS = 64;
const HANDLER_MS = [0, 2000] as const;

interface Run extends LoadResult {
  stats: { queued: number; running: number; accepted: number };
}

/**
 * Acknowledgement latency: the 202 must not wait for the handler. The same load (a fixed number of
 * fresh signed alerts at 64 connections, below the default maxQueue of 10,000 so that every answer
 * is a 202) against a receiver whose handler takes 0 s and one whose handler takes 2 s. Each run
 * gets a fresh server; the variants alternate.
 */
export async function runAck(settings: BenchSettings): Promise<BenchResult> {
  const rounds = settings.quick ? 1 : 3;
  const amount = settings.quick ? 2000 : 8000;
  const runs = new Map<number, Run[]>(HANDLER_MS.map((ms) => [ms, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? HANDLER_MS : [...HANDLER_MS].reverse();
    for (const ms of order) {
      console.error(`ack: round ${round + 1}/${rounds}, handler ${ms} ms`);
      const child = await startChild<{ port: number }>('ack/ack-server.ts', [String(ms)]);
      try {
        await signedLoad(child.ready.port, { connections: CONNECTIONS, amount: 500 }); // warm-up
        const load = await signedLoad(child.ready.port, { connections: CONNECTIONS, amount });
        const stats = child.next<Run['stats']>();
        child.send('stats');
        runs.get(ms)?.push({ ...load, stats: await stats });
      } finally {
        await child.kill();
      }
    }
  }
  const summary = (ms: number): { p50: number; p99: number; max: number; rps: number } => {
    const list = runs.get(ms) ?? [];
    return {
      p50: median(list.map((r) => r.latencyP50)),
      p99: median(list.map((r) => r.latencyP99)),
      max: median(list.map((r) => r.latencyMax)),
      rps: median(list.map((r) => r.requestsPerSecond)),
    };
  };
  const base = summary(0);
  const rows = HANDLER_MS.map((ms) => {
    const s = summary(ms);
    const list = runs.get(ms) ?? [];
    const last = list[list.length - 1];
    const statuses: Record<string, number> = {};
    let errors = 0;
    for (const r of list) {
      errors += r.errors;
      for (const [code, n] of Object.entries(r.statuses))
        statuses[code] = (statuses[code] ?? 0) + n;
    }
    return [
      `${ms / 1000} s`,
      String(s.p50),
      String(s.p99),
      formatRatio(s.p99 / base.p99),
      String(s.max),
      formatNumber(s.rps),
      statusSummary(statuses, errors),
      last === undefined ? '-' : `${last.stats.queued} queued, ${last.stats.running} running`,
    ];
  });
  const table = markdownTable(
    [
      'handler time',
      'p50 (ms)',
      'p99 (ms)',
      'p99 vs 0 s',
      'max (ms)',
      'req/s',
      'answers',
      'receiver after the load (last run)',
    ],
    rows,
  );
  const notes =
    `${CONNECTIONS} connections, ${formatNumber(amount)} fresh signed alerts per run after 500 ` +
    `warm-up requests, ${rounds} run(s) per variant (medians shown), a fresh child-process server ` +
    'per run: `http.createServer(receiver.node)` with a default receiver (async mode, concurrency ' +
    '10, maxQueue 10,000). The last column shows the 2 s handlers really were still busy when the ' +
    'load ended.';
  return {
    name: 'ack',
    title: 'Acknowledgement latency with slow handlers',
    markdown: `${table}\n\n${notes}`,
    data: Object.fromEntries(runs),
  };
}
