import { createServer } from 'node:http';
import { WEBHOOK_PATH } from './fixtures.js';
import { mountServer } from './http-client.js';
import { runConformanceSuite } from './suite.js';

runConformanceSuite('core receiver.node (node:http)', (receiver) =>
  mountServer(
    createServer((req, res) => void receiver.node(req, res)),
    WEBHOOK_PATH,
  ),
);
