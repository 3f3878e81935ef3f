/** `createRedisQueue` with its defaults (and the run's key prefix). */
import { createReceiver } from '@churn-risk/core';
import { createRedisQueue } from '@churn-risk/redis';
import { oursSide } from './side-ours.js';

export const side = oursSide(() =>
  Promise.resolve({
    createReceiver,
    makeQueue: (url, prefix) => createRedisQueue({ connection: url, prefix }),
  }),
);
