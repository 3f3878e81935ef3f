/** `createRedisQueue` with its defaults (and the run's key prefix). */
import { createReceiver } from '@churn-risk/core';
import { createRedisQueue } from '@churn-risk/redis';
import { oursSide } from './side-ours.js';

const build = () =>
  Promise.resolve({
    createReceiver,
    makeQueue: (url: string, prefix: string) => createRedisQueue({ connection: url, prefix }),
  });

export const side = oursSide(build);
/** In order per user, 10,000 alerts spread over 1,000 users. */
export const perUserSide = oursSide(build, 1_000);
/** In order per user, the worst case: 10 users. */
export const tenUsersSide = oursSide(build, 10);
