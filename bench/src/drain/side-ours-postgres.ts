/** `createPostgresQueue` with its defaults (and the side's own database and schema). */
import { createReceiver } from '@churn-risk/core';
import { createPostgresQueue } from '@churn-risk/postgres';
import { oursSide } from './side-ours.js';

const build = () =>
  Promise.resolve({
    createReceiver,
    makeQueue: (url: string, schema: string) => createPostgresQueue({ connection: url, schema }),
  });

export const side = oursSide(build);
/** In order per user, 10,000 alerts spread over 1,000 users. */
export const perUserSide = oursSide(build, 1_000);
/** In order per user, the worst case: 10 users. */
export const tenUsersSide = oursSide(build, 10);
