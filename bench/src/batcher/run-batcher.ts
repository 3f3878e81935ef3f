import { ChurnRiskClient } from '@churn-risk/core';
import { startChild } from '../lib/child.js';
import { formatNumber, formatRatio, markdownTable, median } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';

const EVENTS = 100_000;
const USERS = 1_000;

interface Item {
  userId: string;
  event: string;
  timestamp: string;
  properties: Record<string, number>;
}

interface Run {
  variant: string;
  wallMs: number;
  /** Time spent in the `push` loop alone (validation and queueing). */
  pushMs: number;
  requests: number;
  sent: number;
  stored: number;
}

function items(): Item[] {
  const start = Date.now() - 60 * 60 * 1000;
  return Array.from({ length: EVENTS }, (_, i) => ({
    userId: `bench_user_${i % USERS}`,
    event: i % 50 === 0 ? 'support_ticket_opened' : 'page_view',
    timestamp: new Date(start + i).toISOString(),
    properties: { n: i },
  }));
}

/** The batcher: push everything, then `destroy()` (sends what is left) and count the requests. */
async function viaBatcher(url: string, apiKey: string, all: Item[], maxSize: number) {
  let requests = 0;
  let sent = 0;
  const client = new ChurnRiskClient({
    apiKey,
    baseUrl: url,
    onRequest: () => {
      requests += 1;
    },
  });
  const errors: unknown[] = [];
  const batcher = client.createBatcher({
    maxSize,
    maxQueueSize: EVENTS,
    onFlush: (count) => (sent += count),
    onError: (error) => errors.push(error),
  });
  const started = performance.now();
  for (const item of all) batcher.push(item);
  const pushMs = performance.now() - started;
  await batcher.destroy();
  const wallMs = performance.now() - started;
  if (errors.length > 0) throw new Error(`the batcher reported errors: ${String(errors[0])}`);
  return { wallMs, pushMs, requests, sent };
}

/** Baseline: the same events as pre-serialised bulk bodies, POSTed one at a time with fetch. */
async function viaFetch(url: string, apiKey: string, all: Item[], maxSize: number) {
  const started = performance.now();
  let requests = 0;
  let sent = 0;
  for (let i = 0; i < all.length; i += maxSize) {
    const events = all.slice(i, i + maxSize);
    const response = await fetch(`${url}/v1/events/bulk`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json',
        'idempotency-key': crypto.randomUUID(),
      },
      body: JSON.stringify({ events }),
    });
    requests += 1;
    if (response.status !== 202) throw new Error(`bulk POST answered ${response.status}`);
    sent += ((await response.json()) as { accepted: number }).accepted;
  }
  const wallMs = performance.now() - started;
  return { wallMs, pushMs: 0, requests, sent };
}

/**
 * The batcher: 100,000 events against the sandbox (in a child process, fresh per run), compared
 * with a hand-written loop of fetch POSTs of the same batches (no validation, no batcher).
 */
export async function runBatcher(settings: BenchSettings): Promise<BenchResult> {
  const all = items();
  const rounds = settings.quick ? 1 : 2;
  const variants = [
    { name: 'fetch loop, 500 per request', maxSize: 500, run: viaFetch },
    { name: 'batcher, maxSize 500', maxSize: 500, run: viaBatcher },
    { name: 'fetch loop, 100 per request', maxSize: 100, run: viaFetch },
    { name: 'batcher, maxSize 100 (default)', maxSize: 100, run: viaBatcher },
  ];
  const runs: Run[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      console.error(`batcher: round ${round + 1}/${rounds} ${variant.name}`);
      const sandbox = await startChild<{ url: string; apiKey: string }>('batcher/sandbox-child.ts');
      try {
        const r = await variant.run(sandbox.ready.url, sandbox.ready.apiKey, all, variant.maxSize);
        const count = sandbox.next<{ users: number; events: number }>();
        sandbox.send('count');
        const stored = (await count).events;
        if (r.sent !== EVENTS || stored !== EVENTS) {
          throw new Error(`${variant.name}: ${r.sent} sent, ${stored} stored, not ${EVENTS}`);
        }
        runs.push({ variant: variant.name, ...r, stored });
      } finally {
        await sandbox.kill();
      }
    }
  }
  const wall = (name: string): number =>
    median(runs.filter((r) => r.variant === name).map((r) => r.wallMs));
  const rows = variants.map((v) => {
    const list = runs.filter((r) => r.variant === v.name);
    const baseline = variants.find((b) => b.maxSize === v.maxSize && b.run === viaFetch);
    const ms = wall(v.name);
    return [
      v.name,
      formatNumber(list[0]?.requests ?? 0),
      formatNumber(ms),
      v.run === viaBatcher ? formatNumber(median(list.map((r) => r.pushMs))) : '-',
      formatNumber((EVENTS * 1000) / ms),
      formatRatio(wall(baseline?.name ?? v.name) / ms),
    ];
  });
  const table = markdownTable(
    [
      'variant',
      'requests',
      'wall time (ms)',
      'of which push() loop (ms)',
      'events/s',
      'speed vs fetch loop',
    ],
    rows,
  );
  const notes =
    `${formatNumber(EVENTS)} events over ${formatNumber(USERS)} users, ${rounds} run(s) per ` +
    'variant (median wall time), each against a fresh sandbox (`createSandbox()`, default ' +
    'options) in a child process. The batcher gets `maxQueueSize: 100000` so that pushing ' +
    'everything at once drops nothing (the default 10,000 would drop the oldest, by design); ' +
    'wall time is from the first `push` to `destroy()` resolving. Every run checks that the ' +
    "sandbox stored all 100,000 events. Requests counted with the client's `onRequest` hook.";
  return { name: 'batcher', title: 'Event batcher', markdown: `${table}\n\n${notes}`, data: runs };
}
