import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DeliveryRejectedError } from '../errors/delivery-rejected-error.js';
import { ReceiverUnavailableError } from '../errors/receiver-unavailable-error.js';
import { createTestAlert, createTestDelivery } from '../testing.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import { readNodeBody, sendNodeResponse } from './request-body.js';
import { errorResponse, jsonResult } from './responses.js';

const LISTENED = ['data', 'end', 'error', 'close'] as const;
const listeners = (stream: PassThrough): number[] =>
  LISTENED.map((name) => stream.listenerCount(name));

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('readNodeBody', () => {
  it('concatenates the chunks, bytes or strings, and removes its listeners', async () => {
    const stream = new PassThrough();
    const reading = readNodeBody(stream, { maxBytes: 10 });
    stream.write(Buffer.from('héllo'));
    stream.end(Buffer.from('!!!!'));
    expect(new TextDecoder().decode(await reading)).toBe('héllo!!!!');
    expect(listeners(stream)).toEqual([0, 0, 0, 0]);

    const text = new PassThrough();
    text.setEncoding('utf8');
    const readingText = readNodeBody(text, { maxBytes: 10 });
    text.end('exactly 10');
    expect(new TextDecoder().decode(await readingText)).toBe('exactly 10');
  });

  it('rejects 413 on the chunk that passes the limit, stops reading and cleans up', async () => {
    const stream = new PassThrough();
    const reading = readNodeBody(stream, { maxBytes: 8 });
    stream.write('12345');
    const error = await rejection(
      (async () => {
        stream.write('6789');
        return reading;
      })(),
    );
    expect(error).toBeInstanceOf(DeliveryRejectedError);
    expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(listeners(stream)).toEqual([0, 0, 0, 0]);
    expect(stream.isPaused()).toBe(true);
    stream.write('more data nobody reads');
    await new Promise((resolve) => setImmediate(resolve));
    expect(stream.readableLength).toBeGreaterThan(0); // left in the buffer, not consumed
  });

  it('rejects at once when Content-Length is above the limit, before reading anything', async () => {
    const stream = Object.assign(new PassThrough(), { headers: { 'content-length': '1000' } });
    const error = await rejection(readNodeBody(stream, { maxBytes: 999 }));
    expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(listeners(stream)).toEqual([0, 0, 0, 0]);
    // A Content-Length within the limit reads normally.
    const ok = Object.assign(new PassThrough(), { headers: { 'content-length': '3' } });
    const reading = readNodeBody(ok, { maxBytes: 3 });
    ok.end('abc');
    expect((await reading).byteLength).toBe(3);
  });

  it('rejects when the stream fails, closes early, or was already read', async () => {
    const failing = new PassThrough();
    const readingFailing = readNodeBody(failing, { maxBytes: 100 });
    failing.destroy(new Error('socket hang up'));
    expect(await rejection(readingFailing)).toMatchObject({ message: 'socket hang up' });
    expect(listeners(failing)).toEqual([0, 0, 0, 0]);

    const closing = new PassThrough();
    const readingClosing = readNodeBody(closing, { maxBytes: 100 });
    closing.write('partial');
    closing.destroy();
    expect(await rejection(readingClosing)).toMatchObject({
      message: expect.stringMatching(/closed before/),
    });

    const consumed = new PassThrough();
    consumed.resume();
    consumed.end('{}');
    await new Promise((resolve) => consumed.on('end', resolve));
    expect(await rejection(readNodeBody(consumed, { maxBytes: 100 }))).toMatchObject({
      message: expect.stringMatching(/already read/),
    });
  });
});

describe('receiver.fetch body limit', () => {
  it('reads a streamed body chunk by chunk and cancels it once past the limit', async () => {
    const receiver = createReceiver({ secret: 's', maxBodyBytes: 1024 });
    let pulls = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(new Uint8Array(300));
      },
      cancel() {
        cancelled = true;
      },
    });
    const request = new Request('http://x/hooks', {
      method: 'POST',
      body: endless,
      duplex: 'half',
    } as RequestInit);
    const response = await receiver.fetch(request);
    expect(response.status).toBe(413);
    expect((await response.json()).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(cancelled).toBe(true);
    expect(pulls).toBeLessThan(10);
  });

  it('answers 413 from Content-Length without reading the body', async () => {
    const receiver = createReceiver({ secret: 's', maxBodyBytes: 10 });
    let pulls = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++;
        controller.enqueue(new Uint8Array(1));
      },
    });
    const request = new Request('http://x/hooks', {
      method: 'POST',
      headers: { 'content-length': '11' },
      body,
      duplex: 'half',
    } as RequestInit);
    const pullsBefore = pulls;
    expect((await receiver.fetch(request)).status).toBe(413);
    expect(pulls).toBe(pullsBefore);
  });

  it('does not read the body of a request that is not a POST', async () => {
    const receiver = createReceiver({ secret: 's' });
    const request = new Request('http://x/hooks', { method: 'PUT', body: 'x' });
    const response = await receiver.fetch(request);
    expect(response.status).toBe(405);
    expect(request.bodyUsed).toBe(false);
  });
});

describe('receiver.node body limit', () => {
  /** POSTs `chunks` chunked (no Content-Length) on a connection of its own; the answer's status. */
  const postChunked = (port: number, headers: Record<string, string>, chunks: string[]) =>
    new Promise<number | undefined>((resolve, reject) => {
      const outgoing = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        headers,
        agent: false,
      });
      outgoing.on('error', reject);
      outgoing.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      for (const chunk of chunks) outgoing.write(chunk);
      outgoing.end();
    });

  it('answers 413 with Connection: close while the client is still sending, and keeps serving', async () => {
    const secret = 'whsec_body_limit';
    const receiver = createReceiver({ secret, maxBodyBytes: 1000 });
    const seen: string[] = [];
    receiver.on('churn_risk_alert', (alert) => void seen.push(alert.userId));
    const server = createServer((req, res) => void receiver.node(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const outgoing = httpRequest({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/hooks',
        agent: false,
      });
      outgoing.on('error', () => undefined); // the server may close before we stop writing
      const answer = new Promise<IncomingMessage>((resolve) => outgoing.on('response', resolve));
      outgoing.write('x'.repeat(600)); // chunked: no Content-Length, the limit is found while reading
      outgoing.write('x'.repeat(600));
      const res = await answer;
      expect(outgoing.writableEnded).toBe(false); // the answer came before the request ended
      expect(res.statusCode).toBe(413);
      expect(res.headers.connection).toBe('close');
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      expect(JSON.parse(Buffer.concat(chunks).toString()).error.code).toBe('PAYLOAD_TOO_LARGE');
      outgoing.destroy();
      // The server keeps serving after the refused body: a chunked delivery within the limit runs.
      const alert = createTestAlert();
      const { headers, body } = createTestDelivery(alert, { secret });
      expect(await postChunked(port, headers, [body.slice(0, 10), body.slice(10)])).toBe(202);
      await receiver.drain({ timeoutMs: 5000 });
      expect(seen).toEqual([alert.userId]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await receiver.close();
    }
  });
});

describe('sendNodeResponse and errorResponse', () => {
  function fakeResponse(headersSent = false): ServerResponse & { written: unknown[] } {
    const written: unknown[] = [];
    const headers: Record<string, string> = {};
    return {
      headersSent,
      writableEnded: false,
      destroyed: false,
      statusCode: 200,
      setHeader: (name: string, value: string) => (headers[name] = value),
      end: (body: string) => written.push({ headers, body }),
      written,
    } as unknown as ServerResponse & { written: unknown[] };
  }

  it('writes status, headers and body once, and nothing after the answer was sent', () => {
    const res = fakeResponse();
    sendNodeResponse(res, jsonResult(202, { received: true }));
    expect(res.statusCode).toBe(202);
    expect(res.written).toEqual([
      { headers: { 'content-type': 'application/json' }, body: '{"received":true}' },
    ]);
    const sent = fakeResponse(true);
    sendNodeResponse(sent, jsonResult(202, {}));
    expect(sent.written).toEqual([]);
  });

  it('turns a refusal into its answer and anything else into a generic 500', () => {
    const answer = errorResponse(new ReceiverUnavailableError('OVERLOADED', 'busy'));
    expect(answer).toMatchObject({ status: 503, headers: { 'retry-after': '5' } });
    expect(JSON.parse(answer.body)).toEqual({ error: { code: 'OVERLOADED', message: 'busy' } });
    const internal = errorResponse(new Error('connection string postgres://user:pw@db'));
    expect(internal.status).toBe(500);
    expect(internal.body).not.toContain('postgres');
  });
});
