import { Cluster } from 'ioredis';
import { requiredEnv } from '../durable-process.js';

/** REDIS_CLUSTER_NODES (JSON `[{ host, port }]`) connects to a Redis Cluster, else REDIS_URL. */
export function redisConnection(): string | Cluster {
  const nodes = process.env.REDIS_CLUSTER_NODES;
  return nodes === undefined ? requiredEnv('REDIS_URL') : new Cluster(JSON.parse(nodes) as never);
}
