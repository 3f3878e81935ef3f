/**
 * CPU profile of one server of servers.ts under signed load, against its own redis-server (not
 * part of `pnpm bench`; after `pnpm build`):
 *   node --import tsx bench/src/redis/profile-redis.ts fastify-ours-redis 8
 * Profiles go to bench/results/prof/ (one per thread; the largest is the main thread).
 */
import { fileURLToPath } from 'node:url';
import { startRedisServer } from '@churn-risk/redis/testing';
import { startChild } from '../lib/child.js';
import { signedLoad } from '../lib/signed-load.js';

const name = process.argv[2] ?? 'fastify-ours-redis';
const seconds = Number(process.argv[3] ?? '8');
const dir = fileURLToPath(new URL('../../results/prof/', import.meta.url));
const redis = await startRedisServer();
try {
  const child = await startChild<{ port: number }>(
    'redis/server.ts',
    [name, redis.url, `profile-${name}`],
    ['--cpu-prof', `--cpu-prof-dir=${dir}`],
  );
  const result = await signedLoad(child.ready.port, { connections: 32, duration: seconds });
  console.log(`${name}: ${Math.round(result.requestsPerSecond)} req/s`, result.statuses);
  const exited = new Promise((resolve) => child.process.once('exit', resolve));
  child.process.disconnect(); // server.ts exits on disconnect, which writes the profile
  await exited;
  console.log(`profiles: ${dir}`);
} finally {
  await redis.stop();
  redis.cleanup();
}
