import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresQueue, createPostgresStore, POSTGRES_QUEUE_DEFAULTS } from '../src/index.js';

const URL = 'postgres://app:pw@127.0.0.1:1/alerts';

describe('createPostgresQueue options', () => {
  it('has the documented defaults', async () => {
    expect(POSTGRES_QUEUE_DEFAULTS).toEqual({
      schema: 'churn_risk',
      leaseMs: 30_000,
      maxStalls: 3,
      enqueueTimeoutMs: 2_000,
      dedupeTtlMs: 72 * 3_600_000,
      keepFailedMs: 30 * 24 * 3_600_000,
      pollIntervalMs: 2_000,
      listen: true,
    });
    const store = createPostgresStore({ connection: URL });
    expect([store.kind, store.schema]).toEqual(['postgres', 'churn_risk']);
    const queue = createPostgresQueue({ connection: URL });
    expect(Object.keys(queue)).not.toContain('boss');
    await Promise.all([store.close(), queue.close()]);
  });

  it.each([
    ['lockDurationMs', 'leaseMs'],
    ['stalledIntervalMs', 'reclaimIntervalMs'],
    ['ttlMs', 'dedupeTtlMs'],
    ['pollIntervalMS', 'pollIntervalMs'],
    ['keepFailed', 'keepFailedMs'],
  ])('refuses the unknown option %s with a TypeError naming it and %s', (key, known) => {
    for (const create of [createPostgresQueue, createPostgresStore]) {
      expect(() => create({ connection: URL, [key]: 1000 })).toThrow(TypeError);
      expect(() => create({ connection: URL, [key]: 1000 })).toThrow(
        new RegExp(`"${key}".*${known}`),
      );
    }
  });

  it.each([
    ['no options', undefined],
    ['no connection', {}],
    ['a connection that is not a postgres:// URL', { connection: 'redis://127.0.0.1:6379' }],
    ['a number as connection', { connection: 5432 }],
    ['a schema with upper case', { connection: URL, schema: 'Churn' }],
    ['a schema with a quote', { connection: URL, schema: 'a";drop' }],
    ['an empty schema', { connection: URL, schema: '' }],
    ['leaseMs 0', { connection: URL, leaseMs: 0 }],
    ['leaseMs 1.5', { connection: URL, leaseMs: 1.5 }],
    ['maxStalls -1', { connection: URL, maxStalls: -1 }],
    ['maxStalls 1.5', { connection: URL, maxStalls: 1.5 }],
    ['enqueueTimeoutMs "2000"', { connection: URL, enqueueTimeoutMs: '2000' }],
    ['dedupeTtlMs NaN', { connection: URL, dedupeTtlMs: Number.NaN }],
    ['keepFailedMs beyond a safe integer', { connection: URL, keepFailedMs: 2 ** 60 }],
    ['listen "yes"', { connection: URL, listen: 'yes' }],
    ['reclaimIntervalMs 0', { connection: URL, reclaimIntervalMs: 0 }],
    ['pollIntervalMs 0', { connection: URL, pollIntervalMs: 0 }],
    ['pollIntervalMs 2.5', { connection: URL, pollIntervalMs: 2.5 }],
  ])('refuses %s with a TypeError at creation', (_name, options) => {
    expect(() => createPostgresQueue(options as never)).toThrow(TypeError);
    expect(() => createPostgresStore(options as never)).toThrow(TypeError);
  });

  it('says, without a connection (an environment variable unset at build), to make the queue on the first request', () => {
    for (const create of [createPostgresQueue, createPostgresStore]) {
      expect(() => create({ connection: process.env.CHURN_RISK_UNSET_DATABASE_URL! })).toThrow(
        /connection is required.*\(got undefined\).*DATABASE_URL.*`next build`.*make the queue on the first request.*not at module load/,
      );
    }
    expect(() => createPostgresQueue({ connection: null as never })).toThrow(/\(got null\)/);
  });

  it('accepts a URL, pool options and a pg.Pool, and never ends a pool it was given', async () => {
    const pool = new pg.Pool({ connectionString: URL });
    const queues = [
      createPostgresQueue({ connection: URL }),
      createPostgresQueue({ connection: { host: '127.0.0.1', port: 1, database: 'alerts' } }),
      createPostgresQueue({ connection: pool, schema: 'other', maxStalls: 0 }),
    ];
    await Promise.all(queues.map((queue) => queue.close()));
    expect(pool.ended).toBe(false);
    await pool.end();
  });

  it('health() of a database that is down names the host, never the password', async () => {
    const queue = createPostgresQueue({ connection: URL });
    const health = await queue.health();
    expect(health.reachable).toBe(false);
    expect(health.error).toContain('127.0.0.1:1/alerts');
    expect(health.error).not.toContain('pw');
    expect(health.error).not.toContain('app');
    await expect(queue.depth()).rejects.toThrow();
    await queue.close();
  });
});
