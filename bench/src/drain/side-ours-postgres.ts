/** `createPostgresQueue` with its defaults (and the side's own database and schema). */
import { createReceiver } from '@churn-risk/core';
import { createPostgresQueue } from '@churn-risk/postgres';
import { oursSide } from './side-ours.js';

export const side = oursSide(() =>
  Promise.resolve({
    createReceiver,
    makeQueue: (url, schema) => createPostgresQueue({ connection: url, schema }),
  }),
);
