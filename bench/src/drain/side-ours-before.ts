/**
 * Our sides built at `--before=<git-ref>` (`lib/before-build.ts`): core, `@churn-risk/redis` and
 * `@churn-risk/postgres` from that commit's worktree, with their defaults, beside the working
 * tree's in the same rounds.
 */
import { importBefore } from '../lib/packages.js';
import { oursSide } from './side-ours.js';

export const redisSide = oursSide(async () => {
  const { createReceiver } = await importBefore('@churn-risk/core');
  const { createRedisQueue } = await importBefore('@churn-risk/redis');
  return {
    createReceiver,
    makeQueue: (url, prefix) => createRedisQueue({ connection: url, prefix }),
  };
});

export const postgresSide = oursSide(async () => {
  const { createReceiver } = await importBefore('@churn-risk/core');
  const { createPostgresQueue } = await importBefore('@churn-risk/postgres');
  return {
    createReceiver,
    makeQueue: (url, schema) => createPostgresQueue({ connection: url, schema }),
  };
});
