import { startChild } from '../lib/child.js';
import { formatBytes, formatNumber, markdownTable } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';

interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}

interface Report {
  count: number;
  before: Memory;
  after: Memory;
  statuses: Record<string, number>;
  stats: { queued: number; running: number; accepted: number };
}

/** Memory with 10,000 alerts held by the receiver (handlers blocked), in a fresh child process. */
export async function runMemory(_settings: BenchSettings): Promise<BenchResult> {
  const count = 10_000;
  const child = await startChild<Report>('ack/memory-child.ts', [String(count)], ['--expose-gc']);
  await child.kill();
  const r = child.ready;
  const row = (label: string, key: keyof Memory): string[] => [
    label,
    formatBytes(r.before[key]),
    formatBytes(r.after[key]),
    formatBytes(r.after[key] - r.before[key]),
    `${formatNumber((r.after[key] - r.before[key]) / count)} B`,
  ];
  const table = markdownTable(
    ['measure', 'before', `after ${formatNumber(count)} alerts`, 'growth', 'per alert'],
    [
      row('RSS', 'rss'),
      row('V8 heap used', 'heapUsed'),
      row('external + ArrayBuffers', 'external'),
    ],
  );
  const answers = Object.entries(r.statuses)
    .map(([code, n]) => `${code}: ${n}`)
    .join(', ');
  const notes =
    `Answers: ${answers}. Receiver afterwards: ${r.stats.queued} queued, ${r.stats.running} ` +
    'running (default receiver: concurrency 10, maxQueue 10,000; every handler awaits one ' +
    'promise that is never settled during the measurement). Each delivery is a fresh ~250-byte ' +
    'alert signed and handed to `receiver.handle` in-process; numbers after a full GC (--expose-gc); ' +
    'growth includes the dedupe store remembering 10,000 identities.';
  return {
    name: 'memory',
    title: 'Memory with 10,000 queued alerts',
    markdown: `${table}\n\n${notes}`,
    data: r,
  };
}
