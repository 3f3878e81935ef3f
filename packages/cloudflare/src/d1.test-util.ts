import { createTestDelivery } from '@churn-risk/core/testing';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll } from 'vitest';
import type { D1Database, QueueProducer } from './bindings.js';
import { createCloudflareQueue, type CloudflareQueue } from './cloudflare-queue.js';
import { MemoryQueues } from './memory-queues.test-util.js';

/**
 * Test support for queue mode's tests in Node: real D1 databases (SQLite in workerd, through
 * miniflare's bindings proxy), and the signed webhook request that delivers an alert.
 */

/**
 * Starts miniflare with `count` D1 databases before the file's tests (disposed after them);
 * returns a function that gives a database of its own for each use (tables are not shared
 * between cases).
 */
export function d1Databases(count: number): () => Promise<D1Database> {
  const names = Array.from({ length: count }, (_, i) => `DB${String(i)}`);
  let mf: Miniflare | undefined;
  let next = 0;
  beforeAll(async () => {
    mf = new Miniflare({
      modules: true,
      script: 'export default { fetch() { return new Response(null, { status: 404 }); } }',
      compatibilityDate: '2025-09-01',
      d1Databases: names,
    });
    await mf.ready;
  });
  afterAll(async () => {
    await mf?.dispose();
  });
  return async () => {
    const name = names[next++];
    if (name === undefined) throw new Error(`no D1 database left: ask for more than ${count}`);
    if (mf === undefined) throw new Error('miniflare has not started: call freshDb in a test');
    return await mf.getD1Database(name);
  };
}

/** The init of a POST delivering `alert`, signed with `secret`. */
export function deliveryInit(
  alert: Parameters<typeof createTestDelivery>[0],
  secret: string,
): { method: string; headers: Record<string, string>; body: string } {
  const { headers, body } = createTestDelivery(alert, { secret });
  return { method: 'POST', headers, body };
}

/**
 * One shared platform (Cloudflare Queues in memory, a real D1) and any number of isolates on it:
 * the Queue `alerts`, retried `maxRetries` times, then dead-lettered to `alerts-dlq`.
 */
export class D1Isolates {
  readonly queues: MemoryQueues;
  readonly isolates: CloudflareQueue[] = [];
  /** The Queue's producer as the isolates see it. */
  producer: QueueProducer;
  /** Whether the isolates have the dedupe store (D1). */
  readonly dedupe: boolean;

  constructor(
    readonly db: D1Database,
    { maxRetries, dedupe = true }: { maxRetries: number; dedupe?: boolean },
  ) {
    this.queues = new MemoryQueues({ alerts: { maxRetries, deadLetterQueue: 'alerts-dlq' } });
    this.producer = this.queues.producer('alerts');
    this.dedupe = dedupe;
  }

  /** A new isolate's queue mode on the platform. */
  isolate(): CloudflareQueue {
    const isolate = createCloudflareQueue({
      producer: this.producer,
      ...(this.dedupe ? { dedupe: this.db } : {}),
      failed: this.db,
      deadLetterQueue: 'alerts-dlq',
    });
    this.isolates.push(isolate);
    return isolate;
  }

  /** Delivers every message due on both Queues to the isolates in turn until none is left. */
  settle(): Promise<void> {
    return this.queues.drain(
      ['alerts', 'alerts-dlq'],
      this.isolates.map((isolate) => (batch) => isolate.consume(batch)),
    );
  }
}
