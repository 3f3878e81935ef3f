import { startPostgres, type PostgresServer } from '@churn-risk/postgres/testing';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureWalk, ROOT, type Mode, type Variant, type Walk } from './measure.js';
import { parseReadmeWalks, readReadmeWalks, type ReadmeWalks } from './readme-walks.js';

// docs/architecture.md's Architecture walks, measured: for one delivery, the source files of
// packages/<name>/src/ where code ran (V8 precise coverage in a child process, reset just before
// the delivery, so code that ran at import or creation does not count). `node --conditions=
// @churn-risk/source --import tsx test/architecture/walk.ts` prints what it measures, and the table.

const WALK_TIMEOUT = 120_000;
const sorted = (files: readonly string[]): string[] => [...files].sort();

let redis: RedisServer | undefined;
let postgres: PostgresServer | undefined;
let readme: ReadmeWalks;

beforeAll(async () => {
  readme = readReadmeWalks(ROOT);
  [redis, postgres] = await Promise.all([startRedisServer(), startPostgres()]);
});

afterAll(async () => {
  await Promise.all([redis?.stop(), postgres?.stop()]);
  redis?.cleanup();
  postgres?.cleanup();
});

function servers(): Record<string, string> {
  if (redis === undefined || postgres === undefined) throw new Error('the servers did not start');
  return { REDIS_URL: redis.url, DATABASE_URL: postgres.url };
}

/** The walk of one delivery in `mode`, after checking that it was answered 202 and ran once. */
async function walkOfOne(mode: Mode, variant: Variant): Promise<Walk> {
  const walk = await measureWalk(mode, variant, servers());
  expect(walk.status).toBe(202);
  expect(walk.handlerRuns).toBe(1);
  return walk;
}

describe('the README walk of one delivery in memory mode', () => {
  it(
    'is the numbered list, and at most 12 files',
    async () => {
      const walk = await walkOfOne('memory', 'succeeds');
      expect(readme.memoryCount).toBe(readme.memory.length);
      expect(walk.ran).toEqual(sorted(readme.memory));
      expect(walk.ran.length).toBeLessThanOrEqual(12);
    },
    WALK_TIMEOUT,
  );

  it(
    'with a handler that fails its try: the list and the files the README says it adds',
    async () => {
      const walk = await walkOfOne('memory', 'fails');
      expect(readme.memoryFailingAdds).not.toEqual([]);
      expect(walk.ran).toEqual(sorted([...readme.memory, ...readme.memoryFailingAdds]));
    },
    WALK_TIMEOUT,
  );

  it(
    'sees the files that join: with @opentelemetry/api installed, the README names them; what ran only at creation is not counted',
    async () => {
      const [base, otel] = await Promise.all([
        measureWalk('memory', 'succeeds', servers()),
        measureWalk('memory', 'succeeds', { ...servers(), WALK_OTEL: 'installed' }),
      ]);
      expect(readme.otelAdds).not.toEqual([]);
      expect(otel.ran.filter((file) => !base.ran.includes(file))).toEqual(sorted(readme.otelAdds));
      expect(base.ran.filter((file) => !otel.ran.includes(file))).toEqual([]);
      // Loaded, run by createReceiver, not by the delivery.
      const creation = 'packages/core/src/create-receiver/resolve-options.ts';
      expect(base.loaded).toContain(creation);
      expect(base.ran).not.toContain(creation);
    },
    WALK_TIMEOUT,
  );
});

describe('the README walks of the other modes', () => {
  const cases: [Mode, Variant][] = [];
  for (const mode of ['redis', 'postgres', 'cloudflare'] as const) {
    for (const variant of ['succeeds', 'fails'] as const) cases.push([mode, variant]);
  }

  it.each(cases)(
    '%s, the handler %s: the files and the count of the table',
    async (mode, variant) => {
      const stated = readme.table[mode]?.[variant];
      expect(stated, `the README's table has no ${mode} column`).toBeDefined();
      const walk = await walkOfOne(mode, variant);
      expect(walk.ran).toEqual(sorted(stated?.files ?? []));
      expect(walk.ran.length).toBe(stated?.count);
    },
    WALK_TIMEOUT,
  );
});

describe("the README's walks as read by the test", () => {
  it('reads the list, the paragraphs and the table (the reading can fail)', () => {
    const text = [
      '# x',
      '## Architecture',
      'One delivery crosses these 2 files.',
      '1. [`../packages/express/src/a.ts`](../packages/express/src/a.ts): the adapter,',
      '   see [`../packages/core/src/other.ts`](../packages/core/src/other.ts).',
      '2. [`../packages/core/src/b.ts`](../packages/core/src/b.ts): more.',
      '',
      'A handler that fails adds [`../packages/core/src/c.ts`](../packages/core/src/c.ts).',
      '',
      'When `@opentelemetry/api` is installed, [`../packages/core/src/d.ts`](../packages/core/src/d.ts) joins.',
      '',
      '| file | Redis | Postgres | Cloudflare Queues |',
      '|---|:-:|:-:|:-:|',
      '| [`../packages/core/src/b.ts`](../packages/core/src/b.ts) | ✓ | fails |  |',
      '| [`../packages/redis/src/e.ts`](../packages/redis/src/e.ts) | succeeds |  |  |',
      '| **files: handler succeeds** | **2** | **0** | **0** |',
      '| **files: handler fails** | **1** | **1** | **0** |',
      '',
      '## Next',
      '1. [`../packages/core/src/z.ts`](../packages/core/src/z.ts)',
    ].join('\n');
    const walks = parseReadmeWalks(text);
    expect(walks.memory).toEqual(['packages/express/src/a.ts', 'packages/core/src/b.ts']);
    expect(walks.memoryCount).toBe(2);
    expect(walks.memoryFailingAdds).toEqual(['packages/core/src/c.ts']);
    expect(walks.otelAdds).toEqual(['packages/core/src/d.ts']);
    expect(walks.table.redis).toEqual({
      succeeds: { files: ['packages/core/src/b.ts', 'packages/redis/src/e.ts'], count: 2 },
      fails: { files: ['packages/core/src/b.ts'], count: 1 },
    });
    expect(walks.table.postgres?.fails).toEqual({ files: ['packages/core/src/b.ts'], count: 1 });
    expect(walks.table.cloudflare?.succeeds).toEqual({ files: [], count: 0 });
  });
});
