/**
 * @churn-risk/postgres: durable, multi-instance acceptance and processing of churn-risk alerts on
 * PostgreSQL's own tables. See the package README.
 */
export { createPostgresQueue, type PostgresQueue } from './postgres-queue.js';
export {
  POSTGRES_QUEUE_DEFAULTS,
  type PostgresConnection,
  type PostgresQueueOptions,
} from './options.js';
export { createPostgresStore, type PostgresAlertStore } from './postgres-store.js';
export { PostgresSchemaError, PostgresStoreError } from './errors.js';
/** From `@churn-risk/core` (every durable store lists them alike). */
export type { AlertRecord } from '@churn-risk/core';
export type { FailedListOptions, QueueCounts } from '@churn-risk/core/store';
