/**
 * Any servers of servers.ts side by side against one redis-server (not part of `pnpm bench`; for
 * explorations such as the auto-pipelining variants), after `pnpm build`:
 *   node --import tsx bench/src/redis/compare-redis.ts fastify-hand-bullmq fastify-ours-redis
 * Rounds interleaved as in `pnpm bench redis`; prints each server's medians and every round.
 */
import { summarizeRounds } from '../lib/load-summary.js';
import { measureRedisServers } from './measure.js';

const names = process.argv.slice(2);
if (names.length === 0) throw new Error('name at least one server of servers.ts');
const measured = await measureRedisServers(names, {
  connections: 32,
  rounds: 4,
  duration: 4,
  warmup: 2,
});
for (const name of names) {
  const rounds = measured.rounds.get(name) ?? [];
  const { rps, cpu, p50, p99 } = summarizeRounds(rounds);
  const each = rounds.map(
    (r) =>
      `${Math.round(r.requestsPerSecond)} req/s ${r.cpuPerRequest.toFixed(0)} µs (redis ${r.storeCpuPerRequest.toFixed(0)} µs)`,
  );
  console.log(
    `${name}: ${Math.round(rps)} req/s, ${cpu.toFixed(1)} µs CPU/request, p50/p99 ${p50}/${p99} ms; rounds: ${each.join('; ')}`,
  );
}
