import { startPostgres, type PostgresServer } from '@churn-risk/postgres/testing';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll } from 'vitest';
import { opsApiSuite } from '../../packages/ops/test/api-suite.js';
import { d1Backend, d1Databases, postgresBackend, redisBackend, started } from './stores.js';

// The operations API and page over real stores: a redis-server and a PostgreSQL cluster of this
// file's own, and D1 in workerd (miniflare).

let redis: RedisServer | undefined;
let postgres: PostgresServer | undefined;
let mf: Miniflare | undefined;
const DATABASES = ['DB0', 'DB1', 'DB2', 'DB3'];

beforeAll(async () => {
  mf = new Miniflare({
    modules: true,
    script: 'export default { fetch() { return new Response(null, { status: 404 }); } }',
    compatibilityDate: '2025-09-01',
    d1Databases: DATABASES,
  });
  [redis, postgres] = await Promise.all([startRedisServer(), startPostgres(), mf.ready]);
});

afterAll(async () => {
  const results = await Promise.allSettled([redis?.stop(), postgres?.stop(), mf?.dispose()]);
  redis?.cleanup();
  postgres?.cleanup();
  for (const result of results) if (result.status === 'rejected') throw result.reason;
});

opsApiSuite('Redis', () => Promise.resolve(redisBackend(started(redis).url)));
opsApiSuite('Postgres', () => Promise.resolve(postgresBackend(started(postgres).url)));
const nextDb = d1Databases(() => started(mf), DATABASES);
opsApiSuite('D1 (Cloudflare queue mode)', async () => d1Backend(await nextDb()));
