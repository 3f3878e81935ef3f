import { Redis } from 'ioredis';
import { withBenchRedis } from '../lib/bench-redis.js';
import { side as bullmq } from './side-bullmq.js';
import { side as ours } from './side-ours-redis.js';
import { stampedAlert, type Side } from './side.js';
const n = 40;
await withBenchRedis(async (redis) => {
  for (const [name, side] of [['ours', ours], ['bullmq', bullmq]] as [string, Side][]) {
    const producer = await side.producer({ url: redis.url, namespace: name });
    for (let i = 0; i < n; i++) await producer.enqueue(stampedAlert());
    await producer.close();
    let count = 0;
    let done = () => {};
    const finished = new Promise<void>((r) => (done = r));
    const consumer = await side.consumer({ url: redis.url, namespace: name }, () => { if (++count === n) done(); });
    const mon = await new Redis(redis.url).monitor();
    const lines: string[][] = [];
    mon.on('monitor', (_t: string, args: string[]) => lines.push(args));
    await consumer.start();
    await finished;
    await new Promise((r) => setTimeout(r, 200));
    await consumer.close();
    mon.disconnect();
    console.log(`== ${name}: ${lines.length} commands`);
    for (const args of lines.slice(0, 60)) {
      if (args[0]?.toLowerCase() !== 'evalsha') { console.log('  ', args[0], args.length); continue; }
      console.log('   evalsha', args.length, 'bytes', args.reduce((a, b) => a + b.length, 0), JSON.stringify(args.slice(3).map((a) => (a.length > 60 ? a.slice(0, 60) + '…' + a.length : a))).slice(0, 900));
    }
  }
});
