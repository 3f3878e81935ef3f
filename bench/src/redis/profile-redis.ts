/**
 * CPU profile of one server of servers.ts under signed load, against its own redis-server (not
 * part of `pnpm bench`; after `pnpm build`):
 *   node --import tsx bench/src/redis/profile-redis.ts fastify-ours-redis 8
 * Profiles go to bench/results/prof/ (one per thread; the largest is the main thread).
 */
import { startRedisServer } from '@churn-risk/redis/testing';
import { profileChild } from '../lib/profile-child.js';

const name = process.argv[2] ?? 'fastify-ours-redis';
const seconds = Number(process.argv[3] ?? '8');
const redis = await startRedisServer();
try {
  const args = [name, redis.url, `profile-${name}`];
  const dir = await profileChild('redis/server.ts', args, name, seconds);
  console.log(`profiles (one per thread; the largest is the main thread): ${dir}`);
} finally {
  await redis.stop();
  redis.cleanup();
}
