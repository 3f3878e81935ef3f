/**
 * Malformed input fuzzing of the receiver (fast-check, fixed seeds): random methods, headers,
 * signatures, timestamps, bodies, encodings and sizes, through `receiver.handle`, `receiver.fetch`
 * and a real node:http server running `receiver.node`. Never a 2xx without a valid signature, never
 * an unhandled rejection, never a crash; every answer is a status of the receiver's status table with, for an
 * error, a JSON `{"error":{"code","message"}}` body whose code matches the status and the case.
 */
import { createReceiver, type Receiver } from '@churn-risk/core';
import { signPayload } from '@churn-risk/core/testing';
import fc from 'fast-check';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NOW_MS, NOW_S } from '../conformance/fixtures.js';
import { closeServer, listenLocal } from '../conformance/http-client.js';

import {
  caseArb,
  MAX_BODY,
  SECRET,
  SPEC_STATUS,
  TOLERANCE,
  encoder,
  type FuzzCase,
} from './fuzz-cases.js';

interface Answer {
  status: number;
  contentType: string | undefined;
  body: string;
}

/** Statuses answered in the current test: the generators must reach every row of the table. */
const statusesSeen = new Set<number>();
const EVERY_STATUS = [202, 400, 401, 405, 413];

/** Checks one answer against the case (throws on a mismatch). */
function checkAnswer(fuzz: FuzzCase, answer: Answer, bodyExpected = true): void {
  const { status } = answer;
  statusesSeen.add(status);
  if (status >= 200 && status <= 299) {
    // Never a 2xx for a delivery that is not validly signed.
    expect(fuzz.signedValidly, `2xx for ${JSON.stringify(fuzz.headers)}`).toBe(true);
  }
  if (fuzz.allowed === 'ok') {
    expect([202, 400]).toContain(status);
  } else {
    expect(fuzz.allowed.map((code) => SPEC_STATUS[code])).toContain(status);
  }
  if (!bodyExpected) return;
  expect(answer.contentType).toMatch(/^application\/json/);
  const parsed = JSON.parse(answer.body) as {
    received?: unknown;
    error?: { code?: unknown; message?: unknown };
  };
  expect(answer.body).not.toContain(SECRET);
  if (status === 202) {
    expect(parsed.received).toBe(true);
    return;
  }
  const code = String(parsed.error?.code);
  expect(typeof parsed.error?.message).toBe('string');
  expect(SPEC_STATUS[code]).toBe(status);
  if (fuzz.allowed === 'ok') expect(code).toBe('INVALID_PAYLOAD');
  else expect(fuzz.allowed).toContain(code);
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

let receiver: Receiver | undefined;
let server: Server | undefined;
const handled: string[] = [];
const handlerErrors: unknown[] = [];

function fuzzReceiver(): Receiver {
  statusesSeen.clear();
  handled.length = 0;
  handlerErrors.length = 0;
  receiver = createReceiver({
    secret: SECRET,
    now: () => NOW_MS,
    maxBodyBytes: MAX_BODY,
    tolerance: TOLERANCE,
    retries: 0,
  });
  receiver.on('churn_risk_alert', (alert) => {
    handled.push(alert.userId);
  });
  receiver.onError((error) => handlerErrors.push(error));
  return receiver;
}

afterEach(async () => {
  if (server) await closeServer(server);
  server = undefined;
  await receiver?.close({ timeoutMs: 5000 });
  receiver = undefined;
  // Let any stray rejection surface before checking.
  await new Promise((resolve) => setImmediate(resolve));
  expect(unhandled).toEqual([]);
  expect(handlerErrors).toEqual([]);
});

/** Sends one case over a real socket; `undefined` when the server closed before answering. */
function sendRaw(base: string, fuzz: FuzzCase, chunked: boolean): Promise<Answer | undefined> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...fuzz.headers };
    const hasBody = fuzz.body.byteLength > 0 && fuzz.method !== 'GET' && fuzz.method !== 'HEAD';
    // Node frames a body as chunked by default only for some methods: say so, or the bytes go unframed.
    if (hasBody) {
      if (chunked) headers['transfer-encoding'] = 'chunked';
      else headers['content-length'] = fuzz.body.byteLength;
    }
    const outgoing = httpRequest(
      `${base}/webhooks/churn-risk`,
      { method: fuzz.method, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const type = res.headers['content-type'];
          resolve({
            status: res.statusCode ?? 0,
            contentType: type,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      // A 413 may close the connection while the rest of the body is still being written.
      if (
        fuzz.body.byteLength > MAX_BODY &&
        (error.code === 'ECONNRESET' || error.code === 'EPIPE')
      ) {
        resolve(undefined);
      } else reject(error);
    });
    if (!hasBody) outgoing.end();
    else if (chunked) {
      const half = Math.floor(fuzz.body.byteLength / 2);
      outgoing.write(fuzz.body.subarray(0, half));
      outgoing.end(fuzz.body.subarray(half));
    } else outgoing.end(fuzz.body);
  });
}

describe('receiver fuzzing: malformed input never gets a 2xx, a crash or an unhandled rejection', () => {
  it('receiver.handle', { timeout: 60_000 }, async () => {
    const target = fuzzReceiver();
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        caseArb,
        fc.constantFrom('string', 'bytes', 'arraybuffer'),
        async (fuzz, form) => {
          const body =
            form === 'bytes'
              ? fuzz.body
              : form === 'arraybuffer'
                ? fuzz.body.slice().buffer
                : new TextDecoder().decode(fuzz.body);
          // A string body is sent as its UTF-8 bytes: only bytes that survive decoding keep their signature.
          const sameBytes = form !== 'string' || Buffer.from(body as string).equals(fuzz.body);
          const result = await target.handle({ method: fuzz.method, headers: fuzz.headers, body });
          if (!sameBytes) {
            expect(result.status === 202).toBe(false);
            return;
          }
          checkAnswer(fuzz, {
            status: result.status,
            contentType: result.headers['content-type'],
            body: result.body,
          });
          if (result.status === 202 && result.body === '{"received":true}') accepted++;
          await result.done;
        },
      ),
      { seed: 424_242, numRuns: 2000 },
    );
    await target.drain({ timeoutMs: 5000 });
    // Every accepted alert ran its handler exactly once.
    expect([...statusesSeen].sort()).toEqual(EVERY_STATUS);
    expect(accepted).toBeGreaterThan(0);
    expect(handled).toHaveLength(accepted);
    expect(target.stats.accepted).toBe(accepted);
  });

  it('receiver.fetch (Web Request)', { timeout: 60_000 }, async () => {
    const target = fuzzReceiver();
    await fc.assert(
      fc.asyncProperty(caseArb, async (fuzz) => {
        const hasBody = fuzz.method !== 'GET' && fuzz.method !== 'HEAD';
        const request = new Request('http://127.0.0.1/webhooks/churn-risk', {
          method: fuzz.method,
          headers: fuzz.headers,
          ...(hasBody ? { body: new Uint8Array(fuzz.body) } : {}),
        });
        const response = await target.fetch(request);
        checkAnswer(fuzz, {
          status: response.status,
          contentType: response.headers.get('content-type') ?? undefined,
          body: await response.text(),
        });
      }),
      { seed: 515_151, numRuns: 1000 },
    );
    await target.drain({ timeoutMs: 5000 });
    expect([...statusesSeen].sort()).toEqual(EVERY_STATUS);
    expect(handled).toHaveLength(target.stats.accepted);
  });

  it(
    'receiver.node on a real node:http server (Content-Length and chunked)',
    { timeout: 90_000 },
    async () => {
      const target = fuzzReceiver();
      server = createServer((req, res) => void target.node(req, res));
      const base = await listenLocal(server);
      let cutShort = 0;
      await fc.assert(
        fc.asyncProperty(caseArb, fc.boolean(), async (fuzz, chunked) => {
          const answer = await sendRaw(base, fuzz, chunked);
          if (answer === undefined) {
            cutShort++;
            return;
          }
          // A HEAD answer has no body on the wire.
          checkAnswer(fuzz, answer, fuzz.method !== 'HEAD');
        }),
        { seed: 626_262, numRuns: 600 },
      );
      expect([...statusesSeen].sort()).toEqual(EVERY_STATUS);
      expect(cutShort).toBeLessThan(60);
      // Still alive and still correct after all that: a valid delivery is accepted and handled.
      const body = JSON.stringify({
        event: 'churn_risk_alert',
        userId: 'fuzz_survivor',
        score: 0.9,
        tier: 'high',
        signals: [],
        recommendation: 'none',
        triggeredAt: new Date(NOW_MS).toISOString(),
      });
      const { signature, timestamp } = signPayload({ body, secret: SECRET, timestamp: NOW_S });
      const last = await sendRaw(
        base,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-service-signature': signature,
            'x-service-timestamp': timestamp,
          },
          body: encoder.encode(body),
          allowed: 'ok',
          signedValidly: true,
        },
        false,
      );
      expect(last?.status).toBe(202);
      await target.drain({ timeoutMs: 5000 });
      expect(handled).toContain('fuzz_survivor');
    },
  );
});
