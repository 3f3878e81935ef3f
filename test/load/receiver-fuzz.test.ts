/**
 * Malformed input fuzzing of the receiver (fast-check, fixed seeds): random methods, headers,
 * signatures, timestamps, bodies, encodings and sizes, through `receiver.handle`, `receiver.fetch`
 * and a real node:http server running `receiver.node`. Never a 2xx without a valid signature, never
 * an unhandled rejection, never a crash; every answer is a status of the SPEC's table with, for an
 * error, a JSON `{"error":{"code","message"}}` body whose code matches the status and the case.
 */
import { createReceiver, signPayload, type Receiver } from '@churn-risk/core';
import fc from 'fast-check';
import { createHmac } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NOW_MS, NOW_S } from '../conformance/fixtures.js';
import { closeServer, listenLocal } from '../conformance/http-client.js';

const SECRET = 'whsec_fuzz_91b3f0e2';
const OTHER_SECRET = 'whsec_fuzz_other_55aa';
const MAX_BODY = 1024;
const TOLERANCE = 300;

/** The SPEC's status of each error code (section 4), written out here rather than imported. */
const SPEC_STATUS: Readonly<Record<string, number>> = {
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  MISSING_SIGNATURE: 401,
  MISSING_TIMESTAMP: 401,
  INVALID_TIMESTAMP: 401,
  INVALID_SIGNATURE: 401,
  TIMESTAMP_OUT_OF_TOLERANCE: 401,
  INVALID_PAYLOAD: 400,
  OVERLOADED: 503,
  CLOSED: 503,
};

type Signing = 'valid' | 'valid-among-others' | 'wrong-secret' | 'other-body' | 'random' | 'none';
type Stamp =
  | { kind: 'none' }
  | { kind: 'in-tolerance'; offset: number }
  | { kind: 'out-of-tolerance'; offset: number }
  | { kind: 'garbage'; text: string };

/** One generated delivery, and what the SPEC says must come back. */
interface FuzzCase {
  method: string;
  headers: Record<string, string>;
  body: Uint8Array;
  /** Error codes allowed for this case; `ok` when a 202 or a 400 INVALID_PAYLOAD is allowed. */
  allowed: readonly string[] | 'ok';
  signedValidly: boolean;
}

/** Mostly `valid`, sometimes `invalid`: an alert with a few bad fields, seldom all of them. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>): fc.Arbitrary<T | U> =>
  fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: invalid, weight: 1 });

const alertFields = fc.record({
  event: mostly(fc.constant('churn_risk_alert'), fc.constantFrom('some_future_event', '')),
  userId: mostly(
    fc.string({ minLength: 1, maxLength: 12 }),
    fc.oneof(fc.constant(''), fc.integer()),
  ),
  score: mostly(
    fc.double({ min: 0, max: 1, noNaN: true }),
    fc.oneof(fc.double(), fc.constant('0.5')),
  ),
  tier: mostly(fc.constantFrom('low', 'medium', 'high'), fc.constant('extreme')),
  signals: mostly(fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), fc.constant('x')),
  recommendation: fc.string({ maxLength: 20 }),
  triggeredAt: mostly(
    fc.integer({ min: 0, max: 10_000 }).map((i) => new Date(NOW_MS - i * 1000).toISOString()),
    fc.constant('yesterday'),
  ),
});

const encoder = new TextEncoder();

/** Bodies: valid and near-valid alerts, other JSON, text in several encodings, bytes, big ones. */
const bodyArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  {
    arbitrary: alertFields.map((alert) => encoder.encode(JSON.stringify(alert))),
    weight: 4,
  },
  fc
    .tuple(alertFields, fc.constantFrom('event', 'userId', 'score', 'tier', 'triggeredAt'))
    .map(([alert, drop]) => {
      const copy = Object.fromEntries(Object.entries(alert).filter(([key]) => key !== drop));
      return encoder.encode(JSON.stringify(copy));
    }),
  fc.jsonValue({ maxDepth: 3 }).map((value) => encoder.encode(JSON.stringify(value) ?? 'null')),
  fc
    .tuple(
      fc.string({ unit: 'grapheme', maxLength: 200 }),
      fc.constantFrom('utf8', 'utf16le', 'latin1'),
    )
    .map(([text, encoding]) => new Uint8Array(Buffer.from(text, encoding as BufferEncoding))),
  fc.uint8Array({ maxLength: 300 }),
  fc.constant(new Uint8Array(0)),
  fc
    .integer({ min: MAX_BODY - 2, max: 2 * MAX_BODY })
    .map((size) => new Uint8Array(size).fill(0x7b)),
);

const stampArb: fc.Arbitrary<Stamp> = fc.oneof(
  fc.constant<Stamp>({ kind: 'none' }),
  fc
    .integer({ min: -TOLERANCE, max: TOLERANCE })
    .map<Stamp>((offset) => ({ kind: 'in-tolerance', offset })),
  fc
    .tuple(fc.integer({ min: TOLERANCE + 1, max: 10_000_000 }), fc.boolean())
    .map<Stamp>(([size, past]) => ({ kind: 'out-of-tolerance', offset: past ? -size : size })),
  fc
    .oneof(
      fc.stringMatching(/^[ -~]{0,6}[a-zA-Z.:+-][ -~]{0,6}$/),
      fc.stringMatching(/^[0-9]{13,20}$/),
      fc.constant(''),
    )
    .map<Stamp>((text) => ({ kind: 'garbage', text })),
);

const signingArb = fc.constantFrom<Signing>(
  'valid',
  'valid',
  'valid',
  'valid-among-others',
  'wrong-secret',
  'other-body',
  'random',
  'none',
);

/** A header name in random letter case (names are case-insensitive). */
const caseOf = (name: string) =>
  fc.array(fc.boolean(), { minLength: name.length, maxLength: name.length }).map((upper) =>
    Array.from(name, (c) => c)
      .map((c, i) => (upper[i] ? c.toUpperCase() : c))
      .join(''),
  );

const extraHeadersArb = fc.dictionary(
  fc.stringMatching(/^x-[a-z]{1,8}$/),
  fc.stringMatching(/^[!-~]([ -~]{0,30}[!-~])?$/),
  { maxKeys: 4 },
);

const caseArb = fc
  .record({
    method: fc.constantFrom(
      'POST',
      'POST',
      'POST',
      'POST',
      'POST',
      'POST',
      'GET',
      'PUT',
      'DELETE',
      'PATCH',
      'OPTIONS',
      'HEAD',
    ),
    body: bodyArb,
    signing: signingArb,
    stamp: stampArb,
    randomSignature: fc.stringMatching(/^[!-~]{1,80}$/),
    contentType: fc.constantFrom(
      'application/json',
      'text/plain; charset=utf-16',
      'application/octet-stream',
      'multipart/form-data; boundary=x',
      '',
    ),
    contentEncoding: fc.constantFrom('', 'gzip', 'br', 'identity', 'x-unknown'),
    sigName: caseOf('x-service-signature'),
    stampName: caseOf('x-service-timestamp'),
    extra: extraHeadersArb,
  })
  .map((input): FuzzCase => {
    const { body, signing, stamp } = input;
    const stampText =
      stamp.kind === 'none'
        ? undefined
        : stamp.kind === 'garbage'
          ? stamp.text
          : String(NOW_S + stamp.offset);
    // The signed bytes of SPEC section 2, computed here independently of the core's signer.
    const sign = (bytes: Uint8Array, secret: string) =>
      `sha256=${createHmac('sha256', secret)
        .update(`${stampText ?? String(NOW_S)}.`)
        .update(bytes)
        .digest('hex')}`;
    let signature: string | undefined;
    if (signing === 'valid') signature = sign(body, SECRET);
    if (signing === 'valid-among-others') {
      signature = `${sign(body, OTHER_SECRET)}, ${sign(body, SECRET)}`;
    }
    if (signing === 'wrong-secret') signature = sign(body, OTHER_SECRET);
    if (signing === 'other-body') signature = sign(encoder.encode('{"other":true}'), SECRET);
    if (signing === 'random') signature = input.randomSignature;

    const headers: Record<string, string> = { ...input.extra };
    if (input.contentType !== '') headers['content-type'] = input.contentType;
    if (input.contentEncoding !== '') headers['content-encoding'] = input.contentEncoding;
    if (signature !== undefined) headers[input.sigName] = signature;
    if (stampText !== undefined) headers[input.stampName] = stampText;

    const signedValidly =
      (signing === 'valid' || signing === 'valid-among-others') && stamp.kind === 'in-tolerance';
    let allowed: FuzzCase['allowed'];
    const emptyStamp = stampText?.trim() === '';
    if (input.method !== 'POST') allowed = ['METHOD_NOT_ALLOWED'];
    else if (body.byteLength > MAX_BODY) allowed = ['PAYLOAD_TOO_LARGE'];
    else if (signature === undefined) {
      allowed =
        stampText === undefined
          ? ['MISSING_SIGNATURE', 'MISSING_TIMESTAMP']
          : ['MISSING_SIGNATURE'];
    } else if (stampText === undefined) allowed = ['MISSING_TIMESTAMP'];
    else if (emptyStamp) allowed = ['MISSING_TIMESTAMP', 'INVALID_TIMESTAMP'];
    else if (stamp.kind === 'garbage') allowed = ['INVALID_TIMESTAMP'];
    else if (signing !== 'valid' && signing !== 'valid-among-others')
      allowed = ['INVALID_SIGNATURE'];
    else if (stamp.kind === 'out-of-tolerance') allowed = ['TIMESTAMP_OUT_OF_TOLERANCE'];
    else allowed = 'ok';
    return { method: input.method, headers, body, allowed, signedValidly };
  });

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
