/**
 * Every way of serving a receiver on a real listening socket at 127.0.0.1, for the load tests.
 * The plain node:http mounts reuse the conformance suite's `listenLocal`/`closeServer`.
 */
import type { Receiver } from '@churn-risk/core';
import { createMiddleware } from '@churn-risk/express';
import { churnRiskPlugin } from '@churn-risk/fastify';
import { createPagesHandler, createRouteHandler } from '@churn-risk/next';
import express from 'express';
import Fastify from 'fastify';
import type { NextApiRequest, NextApiResponse } from 'next';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { WEBHOOK_PATH } from '../conformance/fixtures.js';
import { closeServer, listenLocal } from '../conformance/http-client.js';
import { webRequestListener } from '../support/web-bridge.js';

/** A receiver served over HTTP: its webhook URL and a way to stop the server. */
export interface ServedReceiver {
  url: string;
  close(): Promise<void>;
}

/** Mounts a receiver in one adapter behind a listening server. */
export type ServeReceiver = (receiver: Receiver) => Promise<ServedReceiver>;

async function serveNode(
  listener: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<ServedReceiver> {
  const server = createServer(listener);
  const base = await listenLocal(server);
  return { url: `${base}${WEBHOOK_PATH}`, close: () => closeServer(server) };
}

/** The adapters, by name. */
export const ADAPTERS: Readonly<Record<string, ServeReceiver>> = {
  'core receiver.node': (receiver) => serveNode((req, res) => void receiver.node(req, res)),
  express: (receiver) => {
    const app = express();
    app.post(WEBHOOK_PATH, createMiddleware(receiver));
    return serveNode(app);
  },
  fastify: async (receiver) => {
    const app = Fastify();
    await app.register(churnRiskPlugin, { receiver, path: WEBHOOK_PATH });
    await app.ready();
    const base = await listenLocal(app.server);
    return {
      url: `${base}${WEBHOOK_PATH}`,
      close: async () => {
        app.server.closeAllConnections();
        await app.close();
      },
    };
  },
  'next createRouteHandler': (receiver) =>
    serveNode(webRequestListener(createRouteHandler(receiver))),
  'next createPagesHandler': (receiver) => {
    const handler = createPagesHandler(receiver);
    return serveNode((req, res) => void handler(req as NextApiRequest, res as NextApiResponse));
  },
};
