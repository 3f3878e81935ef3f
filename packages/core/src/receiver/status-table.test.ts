/**
 * Every row of the receiver's status table (docs/guarantees.md), through `receiver.fetch` (Web Request) and through
 * `receiver.node` on a real node:http server on 127.0.0.1.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { signPayload } from '../signature/sign.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import type { Receiver, ReceiverOptions } from './types.js';

const SECRET = 'whsec_status_table_91c2';
const NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
const NOW_S = NOW_MS / 1000;

interface Sent {
  method: string;
  headers: Record<string, string>;
  body?: string;
}
interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  text: string;
}
type Transport = (receiver: Receiver, request: Sent) => Promise<Answer>;

const servers: Server[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close({ timeoutMs: 5000 })));
});

const viaFetch: Transport = async (receiver, { method, headers, body }) => {
  const init: RequestInit = { method, headers };
  if (body !== undefined) init.body = body;
  const response = await receiver.fetch(new Request('http://receiver.test/hooks', init));
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    text: await response.text(),
  };
};

const serverOf = new WeakMap<Receiver, Promise<string>>();
function baseUrl(receiver: Receiver): Promise<string> {
  let url = serverOf.get(receiver);
  if (url === undefined) {
    const server = createServer((req, res) => void receiver.node(req, res));
    servers.push(server);
    url = new Promise((resolve) => {
      server.listen(0, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`),
      );
    });
    serverOf.set(receiver, url);
  }
  return url;
}

const viaNode: Transport = async (receiver, { method, headers, body }) => {
  const url = await baseUrl(receiver);
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(body);
    const allHeaders: Record<string, string | number> = { ...headers };
    if (payload !== undefined) allHeaders['content-length'] = payload.length;
    const outgoing = httpRequest(url, { method, headers: allHeaders, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const answerHeaders: Record<string, string | undefined> = {};
        for (const [name, value] of Object.entries(res.headers))
          answerHeaders[name] = String(value);
        resolve({
          status: res.statusCode!,
          headers: answerHeaders,
          text: Buffer.concat(chunks).toString(),
        });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
};

let sequence = 0;
function alert(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  sequence++;
  return {
    event: 'churn_risk_alert',
    userId: `user_${sequence}`,
    score: 0.9,
    tier: 'high',
    signals: ['payment_failed'],
    recommendation: 'Offer help with billing.',
    triggeredAt: new Date(NOW_MS - sequence * 1000).toISOString(),
    ...overrides,
  };
}

function signed(value: unknown, options: { timestamp?: number; secret?: string } = {}): Sent {
  const body = typeof value === 'string' ? value : JSON.stringify(value);
  const { signature, timestamp } = signPayload({
    body,
    secret: options.secret ?? SECRET,
    timestamp: options.timestamp ?? NOW_S,
  });
  return {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'X-Service-Signature': signature,
      'X-Service-Timestamp': timestamp,
    },
    body,
  };
}

function make(options: Partial<ReceiverOptions> = {}): { receiver: Receiver; runs: unknown[] } {
  const receiver = createReceiver({ secret: SECRET, now: () => NOW_MS, retries: 0, ...options });
  receivers.push(receiver);
  const runs: unknown[] = [];
  receiver.on('churn_risk_alert', (payload) => {
    runs.push(payload);
  });
  return { receiver, runs };
}

function expectJson(answer: Answer, status: number, code?: string): void {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json');
  expect(answer.text).not.toContain(SECRET);
  if (code !== undefined) {
    expect(JSON.parse(answer.text)).toEqual({ error: { code, message: expect.any(String) } });
  }
}

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe.each([
  ['fetch', viaFetch],
  ['node', viaNode],
] as const)('status table through receiver.%s', (_name, send) => {
  it.each(['GET', 'PUT', 'HEAD'])('%s: 405 with Allow: POST', async (method) => {
    const { receiver } = make();
    const answer = await send(receiver, { method, headers: {} });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe('POST');
    if (method !== 'HEAD') expectJson(answer, 405, 'METHOD_NOT_ALLOWED');
  });

  it('body larger than maxBodyBytes: 413, checked before the headers', async () => {
    const { receiver, runs } = make({ maxBodyBytes: 300 });
    expectJson(
      await send(receiver, signed(alert({ padding: 'x'.repeat(400) }))),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expectJson(
      await send(receiver, { method: 'POST', headers: {}, body: 'x'.repeat(301) }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expect(runs).toEqual([]);
  });

  it('signature header missing: 401 MISSING_SIGNATURE (even when the timestamp is missing too)', async () => {
    const { receiver } = make();
    const request = signed(alert());
    delete request.headers['X-Service-Signature'];
    expectJson(await send(receiver, request), 401, 'MISSING_SIGNATURE');
    delete request.headers['X-Service-Timestamp'];
    expectJson(await send(receiver, request), 401, 'MISSING_SIGNATURE');
  });

  it('timestamp header missing: 401 MISSING_TIMESTAMP', async () => {
    const { receiver } = make();
    const request = signed(alert());
    delete request.headers['X-Service-Timestamp'];
    expectJson(await send(receiver, request), 401, 'MISSING_TIMESTAMP');
  });

  it('timestamp not digits: 401 INVALID_TIMESTAMP (before the signature is checked)', async () => {
    const { receiver } = make();
    for (const timestamp of ['1768478400.0', '-1768478400', 'now', '2026-01-15T12:00:00Z']) {
      const request = signed(alert());
      request.headers['X-Service-Timestamp'] = timestamp;
      request.headers['X-Service-Signature'] = 'garbage';
      expectJson(await send(receiver, request), 401, 'INVALID_TIMESTAMP');
    }
  });

  it('no signature matches: 401 INVALID_SIGNATURE (before tolerance), without leaking the expected one', async () => {
    const { receiver, runs } = make();
    const value = alert();
    const expected = signPayload({
      body: JSON.stringify(value),
      secret: SECRET,
      timestamp: NOW_S,
    }).signature;
    const wrongSecret = await send(receiver, signed(value, { secret: 'whsec_wrong' }));
    expectJson(wrongSecret, 401, 'INVALID_SIGNATURE');
    expect(wrongSecret.text).not.toContain(expected.slice(7));
    const tampered = signed(value);
    tampered.body = tampered.body!.replace('0.9', '0.1');
    expectJson(await send(receiver, tampered), 401, 'INVALID_SIGNATURE');
    const oldAndWrong = signed(value, { secret: 'whsec_wrong', timestamp: NOW_S - 10_000 });
    expectJson(await send(receiver, oldAndWrong), 401, 'INVALID_SIGNATURE');
    expect(runs).toEqual([]);
  });

  it('timestamp outside tolerance: 401 TIMESTAMP_OUT_OF_TOLERANCE, both directions', async () => {
    const { receiver } = make({ tolerance: 60 });
    for (const timestamp of [NOW_S - 61, NOW_S + 61]) {
      expectJson(
        await send(receiver, signed(alert(), { timestamp })),
        401,
        'TIMESTAMP_OUT_OF_TOLERANCE',
      );
    }
    expect((await send(receiver, signed(alert(), { timestamp: NOW_S - 60 }))).status).toBe(202);
  });

  it('verified but not JSON or not a valid alert: 400 INVALID_PAYLOAD', async () => {
    const { receiver, runs } = make();
    for (const value of ['{not json', '[]', alert({ tier: 'extreme' }), alert({ userId: '' })]) {
      expectJson(await send(receiver, signed(value)), 400, 'INVALID_PAYLOAD');
    }
    await receiver.drain();
    expect(runs).toEqual([]);
  });

  it('verified JSON object with an unknown event: 202, ignored', async () => {
    const { receiver, runs } = make();
    const answer = await send(receiver, signed({ event: 'user_scored', userId: 'u' }));
    expectJson(answer, 202);
    expect(JSON.parse(answer.text)).toEqual({ received: true, ignored: true });
    await receiver.drain();
    expect(runs).toEqual([]);
  });

  it('queue full: 503 OVERLOADED with Retry-After', async () => {
    const { receiver, runs } = make({ concurrency: 1, maxQueue: 1 });
    const hold = gate();
    receiver.on('churn_risk_alert', () => hold.promise);
    expect((await send(receiver, signed(alert()))).status).toBe(202); // running
    expect((await send(receiver, signed(alert()))).status).toBe(202); // waiting
    expect(receiver.stats).toMatchObject({ running: 1, queued: 1 });
    const refused = await send(receiver, signed(alert()));
    expectJson(refused, 503, 'OVERLOADED');
    expect(refused.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    hold.open();
    await receiver.drain();
    expect(runs).toHaveLength(2);
  });

  it('receiver closed: 503 CLOSED with Retry-After', async () => {
    const { receiver, runs } = make();
    await receiver.close();
    const refused = await send(receiver, signed(alert()));
    expectJson(refused, 503, 'CLOSED');
    expect(refused.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(runs).toEqual([]);
  });

  it('accepted: 202 {"received":true}; the same identity again: duplicate, handlers not run again', async () => {
    const { receiver, runs } = make();
    const value = alert();
    const first = await send(receiver, signed(value));
    expectJson(first, 202);
    expect(JSON.parse(first.text)).toEqual({ received: true });
    // A redelivery is signed afresh (another timestamp) but carries the same payload.
    const again = await send(receiver, signed(value, { timestamp: NOW_S - 30 }));
    expectJson(again, 202);
    expect(JSON.parse(again.text)).toEqual({ received: true, duplicate: true });
    await receiver.drain();
    expect(runs).toEqual([value]);
  });

  it('mode sync, a handler failed after its retries: 500 HANDLER_FAILED', async () => {
    const { receiver } = make({ mode: 'sync' });
    receiver.on('churn_risk_alert', () => {
      throw new Error(`failure mentioning nothing secret`);
    });
    receiver.onError(() => undefined);
    const answer = await send(receiver, signed(alert()));
    expectJson(answer, 500, 'HANDLER_FAILED');
    expect(answer.text).not.toContain('failure mentioning');
  });

  it('matches header names case-insensitively and honours custom names', async () => {
    const { receiver } = make({
      signatureHeader: 'X-Acme-Signature',
      timestampHeader: 'x-acme-timestamp',
    });
    const request = signed(alert());
    const headers = {
      'x-acme-signature': request.headers['X-Service-Signature']!,
      'X-ACME-TIMESTAMP': request.headers['X-Service-Timestamp']!,
    };
    expect((await send(receiver, { ...request, headers })).status).toBe(202);
    expectJson(await send(receiver, request), 401, 'MISSING_SIGNATURE');
  });
});
