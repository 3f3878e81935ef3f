import { createServer } from 'node:http';
import { WEBHOOK_PATH } from './fixtures.js';
import { mountServer } from './http-client.js';
import { runConformanceSuite, type MountAdapter } from './suite.js';

const mount: MountAdapter = (receiver) =>
  mountServer(
    createServer((req, res) => void receiver.node(req, res)),
    WEBHOOK_PATH,
  );

runConformanceSuite('core receiver.node (node:http)', mount);
runConformanceSuite('core receiver.node (node:http)', mount, { queue: 'redis' });
