/**
 * A web process for the Redis tests: a receiver that only accepts (`consume: false`) into the
 * Redis queue, served by node:http on 127.0.0.1. Env: REDIS_URL (or REDIS_CLUSTER_NODES), PREFIX, SECRET. Prints
 * `listening on <url>`; SIGTERM closes it.
 */
import { createReceiver } from '@churn-risk/core';
import { createRedisQueue } from '@churn-risk/redis';
import { Cluster } from 'ioredis';
import { createServer } from 'node:http';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
};

/** REDIS_CLUSTER_NODES (JSON `[{ host, port }]`) connects to a Redis Cluster, else REDIS_URL. */
function connection(): string | Cluster {
  const nodes = process.env.REDIS_CLUSTER_NODES;
  return nodes === undefined ? env('REDIS_URL') : new Cluster(JSON.parse(nodes) as never);
}

const queue = createRedisQueue({
  connection: connection(),
  prefix: env('PREFIX'),
  enqueueTimeoutMs: Number(process.env.ENQUEUE_TIMEOUT_MS ?? 2000),
});
const receiver = createReceiver({ secret: env('SECRET'), queue, consume: false });
const server = createServer((req, res) => void receiver.node(req, res));
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (typeof address === 'object' && address !== null) {
    console.log(`listening on http://127.0.0.1:${address.port}`);
  }
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void receiver.close({ timeoutMs: 10_000 }).finally(() => process.exit(0));
});
