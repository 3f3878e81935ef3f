import { RAW_BODY_MISSING, rawBodyMissingResult } from '@churn-risk/core/adapter';
import express, { type RequestHandler } from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createMiddleware, rawBodySaver } from './index.js';
import {
  createRecordingReceivers,
  type RecordingReceivers,
} from '../../../test/support/recording-receivers.js';
import { abandonMidBody, postChunked } from '../../../test/support/raw-posts.js';
import { alertBodies, signedHeaders } from '../../../test/support/signed-alerts.js';

const SECRET = 'whsec_express_test_5b1d';
const alertBody = alertBodies('express');

const signed = (body: string, contentType?: string): Record<string, string> =>
  signedHeaders(body, SECRET, contentType);

const recorder = createRecordingReceivers(SECRET);
const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await recorder.closeAll();
});

const recordingReceiver = (maxBodyBytes?: number): ReturnType<RecordingReceivers['create']> =>
  recorder.create(maxBodyBytes);

function userIdOf(body: string): string {
  return (JSON.parse(body) as { userId: string }).userId;
}

describe('createMiddleware with body parsers', () => {
  const parsers: [string, RequestHandler | undefined, string][] = [
    ['no body parser', undefined, 'application/json'],
    ['express.raw()', express.raw({ type: '*/*' }), 'application/json'],
    ['express.text()', express.text({ type: '*/*' }), 'application/json'],
    [
      'express.json({ verify: rawBodySaver })',
      express.json({ verify: rawBodySaver }),
      'application/json',
    ],
    // express.json() leaves bodies of other content types unread: the middleware reads them.
    ['express.json() and a text/plain delivery', express.json(), 'text/plain'],
  ];
  for (const [label, parser, contentType] of parsers) {
    it(`verifies the raw bytes after ${label}`, async () => {
      const { receiver, seen } = recordingReceiver();
      const app = express();
      if (parser) app.use(parser);
      app.post('/webhooks/churn-risk', createMiddleware(receiver));
      // Indented JSON: re-serialising a parsed body would change the bytes and fail the signature.
      const body = alertBody(2);
      const response = await request(app)
        .post('/webhooks/churn-risk')
        .set(signed(body, contentType))
        .send(body);
      expect(response.status, response.text).toBe(202);
      await receiver.drain({ timeoutMs: 5000 });
      expect(seen).toEqual([userIdOf(body)]);
    });
  }

  it('answers 500 at once, naming the fix, after a global express.json() without rawBodySaver', async () => {
    const { receiver, seen } = recordingReceiver();
    const app = express();
    app.use(express.json());
    app.post('/webhooks/churn-risk', createMiddleware(receiver));
    const body = alertBody();
    const response = await request(app).post('/webhooks/churn-risk').set(signed(body)).send(body);
    expect(response.status).toBe(500);
    const { error } = response.body as { error: { code: string; message: string } };
    expect(error.code).toBe('RAW_BODY_MISSING');
    expect(error.code).toBe(RAW_BODY_MISSING);
    // The core's one message, ending with the Express fix.
    const shared = JSON.parse(rawBodyMissingResult('').body) as { error: { message: string } };
    expect(error.message.startsWith(shared.error.message.trim())).toBe(true);
    expect(error.message).toContain('before express.json()');
    expect(error.message).toContain('express.json({ verify: rawBodySaver })');
    expect(response.text).not.toContain(SECRET);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([]);
  });

  it('reads the stream when a parser left an empty object without reading (body-parser 1.x)', async () => {
    const { receiver, seen } = recordingReceiver();
    const app = express();
    app.use((req, _res, next) => {
      req.body = {};
      next();
    });
    app.post('/webhooks/churn-risk', createMiddleware(receiver));
    const body = alertBody();
    const response = await request(app).post('/webhooks/churn-risk').set(signed(body)).send(body);
    expect(response.status, response.text).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(body)]);
  });

  it('keeps JSON parsing of the app’s other routes with rawBodySaver', async () => {
    const { receiver } = recordingReceiver();
    const app = express();
    app.use(express.json({ verify: rawBodySaver }));
    app.post('/webhooks/churn-risk', createMiddleware(receiver));
    app.post('/api/notes', (req, res) => {
      res.json({ echoed: (req.body as { text: string }).text });
    });
    const response = await request(app).post('/api/notes').send({ text: 'hello' });
    expect(response.body).toEqual({ echoed: 'hello' });
  });
});

describe('createMiddleware mounting', () => {
  it('works on a Router under a mount path', async () => {
    const { receiver, seen } = recordingReceiver();
    const router = express.Router();
    router.post('/churn-risk', createMiddleware(receiver));
    const app = express();
    app.use('/webhooks', router);
    const body = alertBody();
    const response = await request(app).post('/webhooks/churn-risk').set(signed(body)).send(body);
    expect(response.status).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(body)]);
  });

  it('answers other methods 405 when mounted with app.use(path)', async () => {
    const { receiver } = recordingReceiver();
    const app = express();
    app.use('/hooks/churn', createMiddleware(receiver));
    const get = await request(app).get('/hooks/churn');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    const body = alertBody();
    const post = await request(app).post('/hooks/churn').set(signed(body)).send(body);
    expect(post.status).toBe(202);
  });
});

describe('createMiddleware on a real socket', () => {
  async function serve(app: express.Express): Promise<string> {
    const server = createServer(app);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/churn-risk`;
  }

  it('answers 413 while reading a chunked body over the limit', async () => {
    const { receiver, seen } = recordingReceiver(512);
    const app = express();
    app.post('/webhooks/churn-risk', createMiddleware(receiver));
    const url = await serve(app);
    const body = JSON.stringify({ ...JSON.parse(alertBody()), padding: 'x'.repeat(4000) });
    const chunks = body.match(/[\s\S]{1,300}/g) ?? [];
    const response = await postChunked(url, signed(body), chunks);
    expect(response.status).toBe(413);
    expect(response.connection).toBe('close'); // the rest of the body was left unread
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
    // The server keeps serving after the refused body.
    const small = alertBody();
    const ok = await postChunked(url, signed(small), [small.slice(0, 10), small.slice(10)]);
    expect(ok.status).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(small)]);
  });

  it('survives a client that goes away mid-body', async () => {
    const { receiver, seen } = recordingReceiver();
    const app = express();
    app.post('/webhooks/churn-risk', createMiddleware(receiver));
    const url = await serve(app);
    const body = alertBody();
    await abandonMidBody(url, signed(body), body);
    const ok = await postChunked(url, signed(body), [body]);
    expect(ok.status).toBe(202);
    await receiver.drain({ timeoutMs: 5000 });
    expect(seen).toEqual([userIdOf(body)]);
  });
});
