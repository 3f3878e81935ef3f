import { createTestDelivery } from '@churn-risk/core/testing';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll } from 'vitest';
import type { D1Database } from './bindings.js';

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
