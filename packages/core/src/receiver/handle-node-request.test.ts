import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createTestDelivery } from '../testing.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import { handleNodeRequest } from './request-body.js';
import { errorResponse, jsonResult } from './responses.js';
import type { Receiver, ReceiverRequest } from './types.js';

/** A receiver that answers 202 to every delivery and records what it was handed. */
/** What the adapters pass when no parser ran. */
const FIX = { rawBodyFix: 'Hand the request over unread.' };

function recordingReceiver(maxBodyBytes = 16) {
  const handled: (Omit<ReceiverRequest, 'body'> & { body: string | null })[] = [];
  const rejected: unknown[] = [];
  const receiver: Pick<Receiver, 'handle' | 'maxBodyBytes' | 'refuse'> = {
    maxBodyBytes,
    handle: (request) => {
      const { body } = request;
      handled.push({
        ...request,
        body:
          body === null || body === undefined
            ? null
            : typeof body === 'string'
              ? body
              : new TextDecoder().decode(body),
      });
      return Promise.resolve(jsonResult(202, { received: true }));
    },
    refuse: (error) => {
      rejected.push(error);
      return errorResponse(error);
    },
  };
  return { receiver, handled, rejected };
}

/** A request stream: a PassThrough with a method and headers, as an `IncomingMessage` is. */
function fakeRequest(method = 'POST', headers: Record<string, string> = {}) {
  return Object.assign(new PassThrough(), { method, headers }) as unknown as PassThrough &
    IncomingMessage;
}

const codeOf = (body: string): string =>
  (JSON.parse(body) as { error: { code: string } }).error.code;

describe('handleNodeRequest: the one Node request path', () => {
  it('reads a POST body and hands method, headers, bytes and waitUntil to the receiver', async () => {
    const { receiver, handled, rejected } = recordingReceiver();
    const req = fakeRequest('POST', { 'x-test': '1' });
    const waitUntil = (): void => undefined;
    const answering = handleNodeRequest(receiver, req, { ...FIX, waitUntil });
    req.write('{"a":');
    req.end('1}');
    const result = await answering;
    expect(result?.status).toBe(202);
    expect(handled).toEqual([
      { method: 'POST', headers: { 'x-test': '1' }, body: '{"a":1}', waitUntil },
    ]);
    expect(rejected).toEqual([]);
  });

  it('uses the body a parser kept and does not read the stream', async () => {
    const { receiver, handled } = recordingReceiver();
    const req = fakeRequest();
    req.write('unread');
    const result = await handleNodeRequest(receiver, req, { ...FIX, kept: 'kept' });
    expect(result?.status).toBe(202);
    expect(handled.map((request) => request.body)).toEqual(['kept']);
    expect(req.readableLength).toBe('unread'.length);
  });

  it('does not read the body of another method: the receiver gets none', async () => {
    const { receiver, handled } = recordingReceiver();
    const req = fakeRequest('PUT');
    req.write('x'.repeat(100)); // over the limit: it is not read, so not refused for its size
    await handleNodeRequest(receiver, req, { ...FIX, kept: 'kept' });
    expect(handled.map(({ method, body }) => ({ method, body }))).toEqual([
      { method: 'PUT', body: null },
    ]);
    expect(req.readableLength).toBe(100);
  });

  it('refuses 413 with Connection: close on the chunk that passes the limit, and reports it', async () => {
    const { receiver, handled, rejected } = recordingReceiver(16);
    const req = fakeRequest();
    const answering = handleNodeRequest(receiver, req, FIX);
    req.write('x'.repeat(10));
    req.write('x'.repeat(10)); // 20 > 16; the request has not ended
    const result = await answering;
    expect(result?.status).toBe(413);
    expect(result?.headers.connection).toBe('close');
    expect(codeOf(result?.body ?? '')).toBe('PAYLOAD_TOO_LARGE');
    expect(rejected).toEqual([expect.objectContaining({ code: 'PAYLOAD_TOO_LARGE' })]);
    expect(handled).toEqual([]);
    expect(req.writableEnded).toBe(false);
  });

  it('refuses 413 from Content-Length before reading', async () => {
    const { receiver, handled } = recordingReceiver(16);
    const req = fakeRequest('POST', { 'content-length': '17' });
    req.write('x');
    const result = await handleNodeRequest(receiver, req, FIX);
    expect(result).toMatchObject({ status: 413, headers: { connection: 'close' } });
    expect(req.readableLength).toBe(1); // nothing read
    expect(handled).toEqual([]);
  });

  it('answers 500 RAW_BODY_MISSING, naming the fix, for a body read without its bytes', async () => {
    const { receiver, handled, rejected } = recordingReceiver();
    const parsed = await handleNodeRequest(receiver, fakeRequest(), {
      consumed: true,
      rawBodyFix: 'Turn the body parser off.',
    });
    expect(parsed?.status).toBe(500);
    expect(codeOf(parsed?.body ?? '')).toBe('RAW_BODY_MISSING');
    expect(parsed?.body).toContain('Turn the body parser off.');
    expect(parsed?.headers.connection).toBeUndefined(); // nothing is left unread

    const consumed = fakeRequest();
    consumed.resume();
    consumed.end('{}');
    await new Promise((resolve) => consumed.on('end', resolve));
    const ended = await handleNodeRequest(receiver, consumed, FIX);
    expect(codeOf(ended?.body ?? '')).toBe('RAW_BODY_MISSING');
    expect(rejected).toHaveLength(2);
    expect(handled).toEqual([]);
  });

  it('answers nothing to a client that went away before or while its body was read', async () => {
    const { receiver, handled, rejected } = recordingReceiver();
    const midBody = fakeRequest();
    const answering = handleNodeRequest(receiver, midBody, FIX);
    midBody.write('{"a":');
    midBody.destroy();
    expect(await answering).toBeUndefined();

    const gone = fakeRequest();
    gone.destroy();
    expect(await handleNodeRequest(receiver, gone, FIX)).toBeUndefined();
    expect(handled).toEqual([]);
    expect(rejected).toEqual([]); // not a refused delivery: nothing logged or reported
  });

  it('on a real socket: a client gone mid-body runs nothing and the server keeps serving', async () => {
    const secret = 'whsec_node_request';
    const receiver = createReceiver({ secret });
    const seen: string[] = [];
    const refused: string[] = [];
    receiver.on('churn_risk_alert', (alert) => {
      seen.push(alert.userId);
    });
    receiver.onRejected(({ code }) => {
      refused.push(code);
    });
    const answers: (number | undefined)[] = [];
    const server = createServer((req, res) => {
      void handleNodeRequest(receiver, req, FIX).then((result) => {
        answers.push(result?.status);
        if (result !== undefined) res.writeHead(result.status, result.headers).end(result.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const { headers, body } = createTestDelivery(undefined, { secret });
    const post = (abandon: boolean): Promise<number | undefined> =>
      new Promise((resolve) => {
        const outgoing = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'POST',
          agent: false,
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        });
        outgoing.on('error', () => resolve(undefined));
        outgoing.on('response', (res) => {
          res.resume();
          resolve(res.statusCode);
        });
        if (abandon) outgoing.write(body.slice(0, 20), () => outgoing.destroy());
        else outgoing.end(body);
      });
    try {
      expect(await post(true)).toBeUndefined();
      await expect.poll(() => answers).toEqual([undefined]);
      expect(await post(false)).toBe(202);
      await receiver.drain({ timeoutMs: 5000 });
      expect(seen).toHaveLength(1);
      expect(refused).toEqual([]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await receiver.close();
    }
  });
});
