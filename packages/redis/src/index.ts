/**
 * @churn-risk/redis: durable, multi-instance acceptance and processing of churn-risk alerts on
 * Redis through BullMQ's public API, and a Redis dedupe store. See
 * the package README.
 */
export { createRedisQueue, type RedisQueue } from './redis-queue.js';
export { REDIS_QUEUE_DEFAULTS, type RedisQueueOptions, type RedisStoreOptions } from './options.js';
export type { RedisClient, RedisConnection } from './connection.js';
export type { AlertJobData } from './job-data.js';
export { createRedisStore, type RedisAlertStore } from './redis-store.js';
/** Moved to `@churn-risk/core` (every durable store lists them alike). */
export type { AlertRecord } from '@churn-risk/core';
export type { FailedListOptions, QueueCounts } from '@churn-risk/core/store';
export {
  createRedisDedupeStore,
  type RedisDedupeStore,
  type RedisDedupeStoreOptions,
} from './redis-dedupe-store.js';
