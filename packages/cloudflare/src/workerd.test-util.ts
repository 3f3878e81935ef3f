import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestDelivery } from '@churn-risk/core/testing';
import { Miniflare } from 'miniflare';

/**
 * Test support: runs a worker bundled by `bundleWorker` (test/support, wrangler's export
 * conditions) in workerd through miniflare WITHOUT `nodejs_compat`, and a node:http recorder the
 * worker's handlers report to.
 */

export { bundleWorker, type WorkerBundle } from '../../../test/support/workerd-bundle.js';

/** Starts workerd with `code` as the only module; without `port` it is reached by dispatchFetch. */
export async function startWorkerd(
  code: string,
  bindings: Record<string, string>,
  options: { port?: number } = {},
): Promise<{ mf: Miniflare; url: URL }> {
  const mf = new Miniflare({
    modules: true,
    script: code,
    compatibilityDate: '2025-09-01',
    compatibilityFlags: [], // no nodejs_compat
    bindings,
    ...(options.port === undefined ? {} : { host: '127.0.0.1', port: options.port }),
  });
  const url = await mf.ready;
  return { mf, url };
}

/**
 * Starts the queue-mode worker bundled from `code` in workerd with D1 (`DB`) and miniflare's Queues:
 * the producer `ALERTS` on `alerts`, whose consumer has max_retries 1 and the dead-letter queue
 * `alerts-dlq` (consumed too). Reached by dispatchFetch.
 */
export async function startQueueWorkerd(
  code: string,
  bindings: Record<string, string>,
): Promise<Miniflare> {
  const mf = new Miniflare({
    modules: true,
    script: code,
    compatibilityDate: '2025-09-01',
    compatibilityFlags: [],
    bindings,
    d1Databases: ['DB'],
    queueProducers: { ALERTS: { queueName: 'alerts' } },
    queueConsumers: {
      alerts: {
        maxBatchSize: 10,
        maxBatchTimeout: 1,
        maxRetries: 1,
        deadLetterQueue: 'alerts-dlq',
      },
      'alerts-dlq': { maxBatchSize: 10, maxBatchTimeout: 1 },
    },
  });
  await mf.ready;
  return mf;
}

/** Delivers `alert`, signed with `secret`, to the worker's webhook; resolves with the answer's status. */
export async function deliverAlert(
  mf: Miniflare,
  alert: Parameters<typeof createTestDelivery>[0],
  secret: string,
): Promise<number> {
  const { headers, body } = createTestDelivery(alert, { secret });
  const response = await mf.dispatchFetch('http://worker.test/webhooks/churn-risk', {
    method: 'POST',
    headers,
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

/** The rows of D1's failed table (`DB`) whose alert id is one of `userId`'s, with `columns`. */
export async function failedRowsOf<Row>(
  mf: Miniflare,
  userId: string,
  columns: string,
): Promise<Row[]> {
  const db = await mf.getD1Database('DB');
  const { results } = await db
    .prepare(`SELECT ${columns} FROM churn_risk_failed WHERE alert_id LIKE ?1`)
    .bind(`${userId}:%`)
    .all<Row>();
  return results;
}

/** A record the worker's handler POSTs to the recorder. */
export interface Report {
  path: string;
  body: Record<string, unknown>;
}

/** A node:http server that records POSTs and holds `GET /gate` until `open()`. */
export interface Recorder {
  url: string;
  reports: Report[];
  /** Resolves once `count` reports whose path is `path` have arrived. */
  waitFor(path: string, count?: number): Promise<Report[]>;
  /** Releases every held and future `GET /gate`. */
  open(): void;
  /** How many `GET /gate` requests are held. */
  readonly held: number;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

export async function startRecorder(): Promise<Recorder> {
  const reports: Report[] = [];
  const waiters: { path: string; count: number; resolve: (r: Report[]) => void }[] = [];
  let gateOpen = false;
  const heldGates: (() => void)[] = [];

  const check = (): void => {
    for (const waiter of [...waiters]) {
      const matching = reports.filter((r) => r.path === waiter.path);
      if (matching.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(matching);
      }
    }
  };

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://recorder').pathname;
    if (req.method === 'GET' && path === '/gate') {
      const release = (): void => void res.end('open');
      if (gateOpen) release();
      else heldGates.push(release);
      return;
    }
    readJson(req).then(
      (body) => {
        reports.push({ path, body });
        res.end('ok');
        check();
      },
      () => res.writeHead(400).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    reports,
    waitFor: (path, count = 1) =>
      new Promise((resolve) => {
        waiters.push({ path, count, resolve });
        check();
      }),
    open() {
      gateOpen = true;
      for (const release of heldGates.splice(0)) release();
    },
    get held() {
      return heldGates.length;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
