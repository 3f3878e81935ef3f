import { createServer } from 'node:http';
import type { NextApiRequest, NextApiResponse } from 'next';
import { createPagesHandler } from '@churn-risk/next';
import { WEBHOOK_PATH } from './fixtures.js';
import { mountServer } from './http-client.js';
import { runConformanceSuite, type MountAdapter } from './suite.js';

// The Pages Router handler uses only plain Node `req`/`res` methods, so a bare node:http server
// stands in for Next's API route resolver (with `bodyParser: false`, Next hands the stream over unread).
const mount: MountAdapter = (receiver) => {
  const handler = createPagesHandler(receiver);
  return mountServer(
    createServer((req, res) => void handler(req as NextApiRequest, res as NextApiResponse)),
    WEBHOOK_PATH,
  );
};

runConformanceSuite('@churn-risk/next createPagesHandler (Pages Router)', mount);
runConformanceSuite('@churn-risk/next createPagesHandler (Pages Router)', mount, {
  queue: 'redis',
});
