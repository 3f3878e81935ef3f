/**
 * Child process entry: `ack-server.ts <handlerMs>`. A default receiver (async mode, concurrency 10,
 * maxQueue 10,000) whose handler takes `handlerMs`, served by `receiver.node` on node:http.
 * Answers `'stats'` messages with the receiver's counters.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createReceiver } from '@churn-risk/core';
import { tellParent } from '../lib/child.js';
import { SECRET } from '../lib/alert.js';

const handlerMs = Number(process.argv[2] ?? '0');
const receiver = createReceiver({ secret: SECRET });
receiver.on('churn_risk_alert', async () => {
  if (handlerMs > 0) await sleep(handlerMs);
});
const server = createServer((req, res) => void receiver.node(req, res));
server.listen(0, '127.0.0.1', () => {
  tellParent({ port: (server.address() as AddressInfo).port });
});
process.on('message', (message) => {
  if (message === 'stats') tellParent(receiver.stats);
});
process.on('disconnect', () => process.exit(0));
