/**
 * A quick look at the Redis drain (not part of `pnpm bench`; after `pnpm build`): one process
 * stores N alerts through a side's producer, then drains them with that side's consumer, for our
 * side and BullMQ's `Worker` in alternating rounds on one redis-server; prints each round's
 * alerts/s and this process's CPU per alert during the drain (`--only=ours` or `--only=bullmq`: one
 * side). `--profile` writes a CPU profile of
 * each side's last drain to bench/results/prof/drain-<side>.cpuprofile (inspector Profiler).
 *
 *   node --import tsx bench/src/drain/profile-drain.ts [n=20000] [rounds=3] [--profile]
 */
import { writeFileSync, mkdirSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { withBenchRedis } from '../lib/bench-redis.js';
import { side as bullmq } from './side-bullmq.js';
import { side as ours } from './side-ours-redis.js';
import { stampedAlert, type Side } from './side.js';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const n = Number(args[0] ?? 20_000);
const rounds = Number(args[1] ?? 3);
const profile = process.argv.includes('--profile');
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);

async function drainOnce(side: Side, url: string, namespace: string, record: string | false) {
  const producer = await side.producer({ url, namespace });
  for (let sent = 0; sent < n; sent += 100) {
    await Promise.all(
      Array.from({ length: Math.min(100, n - sent) }, () => producer.enqueue(stampedAlert())),
    );
  }
  await producer.close();
  let count = 0;
  let first = 0;
  let resolveDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const consumer = await side.consumer({ url, namespace }, () => {
    if (count++ === 0) first = performance.now();
    if (count === n) resolveDone();
  });
  const stats = new Redis(url);
  await stats.config('RESETSTAT');
  const session = record === false ? undefined : new Session();
  if (session !== undefined) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 }); // µs: a short drain has few samples at the default 1 ms
    await session.post('Profiler.start');
  }
  const cpu = process.cpuUsage();
  await consumer.start();
  await done;
  const ms = performance.now() - first;
  const used = process.cpuUsage(cpu);
  if (session !== undefined) {
    const { profile: data } = await session.post('Profiler.stop');
    const dir = fileURLToPath(new URL('../../results/prof/', import.meta.url));
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}drain-${record}.cpuprofile`, JSON.stringify(data));
    session.disconnect();
  }
  const info = await stats.info('commandstats');
  const calls = [...info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)]
    .map(([, name, count]) => `${String(name)} ${(Number(count) / n).toFixed(2)}`)
    .join(', ');
  console.log(`  commands per alert: ${calls}`);
  await stats.quit();
  await consumer.close();
  return { rate: ((n - 1) / ms) * 1000, cpuPerAlert: (used.user + used.system) / n };
}

await withBenchRedis(async (redis) => {
  const url = redis.url;
  for (let round = 0; round < rounds; round++) {
    for (const [name, side] of [
      ['ours', ours],
      ['bullmq', bullmq],
    ] as const) {
      if (only !== undefined && only !== name) continue;
      const result = await drainOnce(
        side,
        url,
        `p${String(round)}${name}`,
        profile && round === rounds - 1 && name,
      );
      console.log(
        `${name.padEnd(7)} round ${String(round)}: ${Math.round(result.rate)} alerts/s, ${result.cpuPerAlert.toFixed(1)} µs CPU/alert`,
      );
    }
  }
});
