/**
 * Child process entry (run with --expose-gc): memory of the receiver holding queued alerts.
 * Enqueues `count` fresh signed alerts through `receiver.handle` while every handler is blocked,
 * and reports RSS and heap before and after (both after a full GC).
 */
import { createReceiver } from '@churn-risk/core';
import { alertBody, SECRET, signHeaders } from '../lib/alert.js';
import { tellParent } from '../lib/child.js';

const count = Number(process.argv[2] ?? '10000');
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

function snapshot(): { rss: number; heapUsed: number; external: number } {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external + m.arrayBuffers };
}

let release: () => void = () => undefined;
const blocked = new Promise<void>((resolve) => (release = resolve));
const receiver = createReceiver({ secret: SECRET });
receiver.on('churn_risk_alert', () => blocked);

// Warm up the code paths (and their allocations) with a few alerts through another receiver.
const warm = createReceiver({ secret: SECRET });
warm.on('churn_risk_alert', () => undefined);
for (let i = 0; i < 200; i++) {
  const body = alertBody();
  await warm.handle({ method: 'POST', headers: signHeaders(body), body: Buffer.from(body) });
}
await warm.close({ timeoutMs: 10_000 });

const before = snapshot();
const statuses: Record<string, number> = {};
for (let i = 0; i < count; i++) {
  const body = alertBody();
  const result = await receiver.handle({
    method: 'POST',
    headers: signHeaders(body),
    body: Buffer.from(body),
  });
  statuses[result.status] = (statuses[result.status] ?? 0) + 1;
}
const after = snapshot();
const stats = receiver.stats;
release();
tellParent({ count, before, after, statuses, stats });
process.on('disconnect', () => process.exit(0));
