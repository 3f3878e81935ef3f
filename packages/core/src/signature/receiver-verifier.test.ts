import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isWebhookVerificationError } from '../errors/webhook-verification-error.js';
import { backend as nodeBackend } from './hmac-node.js';
import { backend as webBackend } from './hmac-web.js';
import { signedBytes } from './verify.js';
import { createVerifier, type DeliveryToVerify, type VerifierOptions } from './verify.js';

type ReceiverVerifierModule = typeof import('./receiver-verifier.js');

const SECRET = 'whsec_receiver_5c0e92d1';
const OTHER_SECRET = 'whsec_other_a7713e08';
const THIRD_SECRET = 'whsec_third_ünï_19fe';
const NOW_S = 1_767_225_600; // 2026-01-01T00:00:00Z
const BODY = '{"event":"churn_risk_alert","userId":"u_1"}';
const encode = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text);

/** `sha256=<hex>` as an independent HMAC (node:crypto) computes it over `signed`. */
function independent(secret: string, signed: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(signed).digest('hex')}`;
}

/** The bytes `signedContent: 'timestamp.body'` covers, built independently of core. */
/**
 * A verifier for `SECRET` at `NOW_S` that answers synchronously: `undefined` for a genuine delivery
 * and a thrown `INVALID_SIGNATURE` for one signed with another secret.
 */
function expectSynchronous(verify: (delivery: DeliveryToVerify) => void | Promise<void>): void {
  const timestamp = String(NOW_S);
  const good = independent(SECRET, `${timestamp}.${BODY}`);
  expect(verify({ body: BODY, signature: good, timestamp })).toBeUndefined();
  expect(() =>
    verify({
      body: BODY,
      signature: independent(OTHER_SECRET, `${timestamp}.${BODY}`),
      timestamp,
    }),
  ).toThrow(expect.objectContaining({ code: 'INVALID_SIGNATURE' }));
}

function timestampDotBody(timestamp: string, body: Uint8Array): Uint8Array {
  return Buffer.concat([Buffer.from(`${timestamp}.`, 'latin1'), body]);
}

/** What a verification ended in: accepted, or a refusal's code, status and message. */
type Outcome = 'ok' | { code: string; status: number; message: string };

function outcomeOf(error: unknown): Outcome {
  if (!isWebhookVerificationError(error)) throw error;
  return { code: error.code, status: error.status, message: error.message };
}

function syncOutcome(run: () => void): Outcome {
  try {
    run();
    return 'ok';
  } catch (error) {
    return outcomeOf(error);
  }
}

async function asyncOutcome(result: void | Promise<void>): Promise<Outcome> {
  expect(result).toBeInstanceOf(Promise);
  try {
    await result;
    return 'ok';
  } catch (error) {
    return outcomeOf(error);
  }
}

const codeOf = (outcome: Outcome): string => (outcome === 'ok' ? 'ok' : outcome.code);

/** `./receiver-verifier.js` loaded afresh with `#hmac` resolved to the named back end. */
async function loadWith(name: 'node:crypto' | '@noble/hashes'): Promise<ReceiverVerifierModule> {
  vi.resetModules();
  vi.doMock('#hmac', () =>
    name === 'node:crypto' ? import('./hmac-node.js') : import('./hmac-web.js'),
  );
  try {
    const { backend } = await import('#hmac');
    expect(backend.name).toBe(name);
    return await import('./receiver-verifier.js');
  } finally {
    vi.doUnmock('#hmac');
  }
}

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

describe('createReceiverVerifier on node:crypto (Node, Bun, Deno)', () => {
  let api: ReceiverVerifierModule;
  beforeAll(async () => {
    api = await loadWith('node:crypto');
  });

  it('is synchronous: returns undefined when valid, throws at once when refused, never uses crypto.subtle', () => {
    const sign = vi.spyOn(globalThis.crypto.subtle, 'sign');
    expectSynchronous(api.createReceiverVerifier({ secret: SECRET, now: () => NOW_S * 1000 }));
    expect(sign).not.toHaveBeenCalled();
  });

  it('throws TypeError for a bad option when created, like createVerifier', () => {
    expect(() => api.createReceiverVerifier({ secret: '' })).toThrow(TypeError);
    expect(() => api.createReceiverVerifier({ secret: SECRET, tolerance: -1 })).toThrow(TypeError);
  });
});

// In workerd, `#receiver-verifier` is receiver-verifier-workerd.ts (WebCrypto alone, no
// @noble/hashes in a worker's bundle): the same cases, with the same outcomes.
describe.each([
  ['the web back end', false, () => loadWith('@noble/hashes')],
  ['workerd (WebCrypto only)', true, () => import('./receiver-verifier-workerd.js')],
] as const)('createReceiverVerifier on %s', (_name, workerd, load) => {
  let api: Pick<ReceiverVerifierModule, 'createReceiverVerifier'>;
  beforeAll(async () => {
    api = await load();
  });

  /** The same checks by the public synchronous verifier (node:crypto in this process). */
  function both(options: VerifierOptions): {
    sync: (d: DeliveryToVerify) => Outcome;
    async: (d: DeliveryToVerify) => Promise<Outcome>;
  } {
    const syncVerify = createVerifier(options);
    const asyncVerify = api.createReceiverVerifier(options);
    return {
      sync: (delivery) => syncOutcome(() => syncVerify(delivery)),
      async: (delivery) => asyncOutcome(asyncVerify(delivery)),
    };
  }

  describe('with crypto.subtle (workerd, browsers)', () => {
    const timestamp = String(NOW_S);
    const good = independent(SECRET, `${timestamp}.${BODY}`);
    const stale = independent(OTHER_SECRET, `${timestamp}.${BODY}`);
    const bodyBytes = encode(BODY);
    const nonAscii = new Uint8Array([
      0x7b, 0xff, 0x00, 0xc3, 0x28, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x99, 0x82, 0x7d,
    ]);
    const far = (NOW_S + 10_000) * 1000;
    const inBigger = (() => {
      const big = new Uint8Array(bodyBytes.length + 10).fill(0x20);
      big.set(bodyBytes, 3);
      return big.subarray(3, 3 + bodyBytes.length);
    })();

    interface Case {
      name: string;
      options?: Partial<VerifierOptions>;
      delivery?: Partial<DeliveryToVerify>;
      expected: string;
    }

    const cases: Case[] = [
      { name: 'a valid delivery, body as string', expected: 'ok' },
      { name: 'body as bytes', delivery: { body: bodyBytes }, expected: 'ok' },
      {
        name: 'body as an ArrayBuffer',
        delivery: { body: bodyBytes.slice().buffer },
        expected: 'ok',
      },
      { name: 'body as a view into a larger buffer', delivery: { body: inBigger }, expected: 'ok' },
      {
        name: 'a changed body',
        delivery: { body: `${BODY} ` },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: 'an empty body',
        delivery: { body: '', signature: independent(SECRET, `${timestamp}.`) },
        expected: 'ok',
      },
      {
        name: 'an empty body, signature of something else',
        delivery: { body: new Uint8Array(0) },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: 'non-ASCII and invalid UTF-8 body bytes',
        delivery: {
          body: nonAscii,
          signature: independent(SECRET, timestampDotBody(timestamp, nonAscii)),
        },
        expected: 'ok',
      },
      {
        name: 'non-ASCII body bytes, one changed',
        delivery: {
          body: Uint8Array.from(nonAscii, (b, i) => (i === 1 ? 0xfe : b)),
          signature: independent(SECRET, timestampDotBody(timestamp, nonAscii)),
        },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: 'a non-ASCII string body (its UTF-8 bytes)',
        delivery: { body: 'é€🙂', signature: independent(SECRET, `${timestamp}.é€🙂`) },
        expected: 'ok',
      },
      { name: 'tolerance -300 s', options: { now: () => (NOW_S - 300) * 1000 }, expected: 'ok' },
      { name: 'tolerance +300 s', options: { now: () => (NOW_S + 300) * 1000 }, expected: 'ok' },
      {
        name: 'tolerance +300.001 s',
        options: { now: () => (NOW_S + 300.001) * 1000 },
        expected: 'TIMESTAMP_OUT_OF_TOLERANCE',
      },
      {
        name: 'tolerance -301 s',
        options: { now: () => (NOW_S - 301) * 1000 },
        expected: 'TIMESTAMP_OUT_OF_TOLERANCE',
      },
      {
        name: 'a custom tolerance',
        options: { tolerance: 10, now: () => (NOW_S - 11) * 1000 },
        expected: 'TIMESTAMP_OUT_OF_TOLERANCE',
      },
      { name: 'tolerance 0 at the same second', options: { tolerance: 0 }, expected: 'ok' },
      {
        name: 'several secrets, the second one signed',
        options: { secret: [OTHER_SECRET, SECRET] },
        expected: 'ok',
      },
      {
        name: 'several secrets, none signed',
        options: { secret: [OTHER_SECRET, THIRD_SECRET] },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: 'a non-ASCII secret',
        options: { secret: [THIRD_SECRET] },
        delivery: { signature: independent(THIRD_SECRET, `${timestamp}.${BODY}`) },
        expected: 'ok',
      },
      {
        name: 'several candidates, the last good',
        delivery: { signature: `${stale},${good}` },
        expected: 'ok',
      },
      {
        name: 'several candidates with spaces',
        delivery: { signature: `${good} ,  ${stale}` },
        expected: 'ok',
      },
      { name: 'a repeated header', delivery: { signature: [stale, good] }, expected: 'ok' },
      {
        name: 'several candidates, none good',
        delivery: { signature: `${stale}, ${stale}` },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: 'several secrets and several candidates',
        options: { secret: [THIRD_SECRET, OTHER_SECRET] },
        delivery: { signature: `${good}, ${stale}` },
        expected: 'ok',
      },
      {
        name: 'upper-case hex',
        delivery: { signature: `sha256=${good.slice(7).toUpperCase()}` },
        expected: 'ok',
      },
      {
        name: 'more than 8 signatures',
        delivery: { signature: Array.from({ length: 9 }, () => good).join(',') },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: '63 hex digits',
        delivery: { signature: good.slice(0, -1) },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: 'another scheme',
        delivery: { signature: 'sha1=abc' },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: 'no signature header',
        delivery: { signature: undefined },
        expected: 'MISSING_SIGNATURE',
      },
      {
        name: 'a blank signature header',
        delivery: { signature: '  ' },
        expected: 'MISSING_SIGNATURE',
      },
      { name: 'no timestamp header', delivery: { timestamp: null }, expected: 'MISSING_TIMESTAMP' },
      {
        name: 'an empty timestamp list',
        delivery: { timestamp: [] },
        expected: 'MISSING_TIMESTAMP',
      },
      {
        name: 'a non-numeric timestamp',
        delivery: { timestamp: 'soon' },
        expected: 'INVALID_TIMESTAMP',
      },
      {
        name: 'a 13-digit timestamp',
        delivery: { timestamp: `${NOW_S}000` },
        expected: 'INVALID_TIMESTAMP',
      },
      {
        name: 'a leading zero (other signed bytes)',
        delivery: { timestamp: `0${NOW_S}` },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: "signedContent 'body'",
        options: { signedContent: 'body' },
        delivery: { signature: independent(SECRET, BODY), timestamp: String(NOW_S - 5) },
        expected: 'ok',
      },
      {
        name: "signedContent 'body' with the body as bytes",
        options: { signedContent: 'body' },
        delivery: { body: inBigger, signature: independent(SECRET, BODY) },
        expected: 'ok',
      },
      {
        name: "signedContent 'body' and an empty body",
        options: { signedContent: 'body' },
        delivery: { body: '', signature: independent(SECRET, '') },
        expected: 'ok',
      },
      {
        name: "signedContent 'body' and a timestamp.body signature",
        options: { signedContent: 'body' },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: "signedContent 'body' still checks the tolerance",
        options: { signedContent: 'body', now: () => far },
        delivery: { signature: independent(SECRET, BODY) },
        expected: 'TIMESTAMP_OUT_OF_TOLERANCE',
      },
      // The documented order: each case has every later fault too.
      {
        name: 'order: missing signature before missing timestamp',
        delivery: { signature: undefined, timestamp: undefined },
        expected: 'MISSING_SIGNATURE',
      },
      {
        name: 'order: missing timestamp before a malformed signature',
        delivery: { signature: 'junk', timestamp: null },
        expected: 'MISSING_TIMESTAMP',
      },
      {
        name: 'order: invalid timestamp before a malformed signature',
        delivery: { signature: 'junk', timestamp: 'x' },
        expected: 'INVALID_TIMESTAMP',
      },
      {
        name: 'order: a malformed signature before the tolerance',
        options: { now: () => far },
        delivery: { signature: 'junk' },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: 'order: no match before the tolerance',
        options: { now: () => far },
        delivery: { body: `${BODY} ` },
        expected: 'INVALID_SIGNATURE',
      },
      {
        name: 'order: the tolerance last',
        options: { now: () => far },
        expected: 'TIMESTAMP_OUT_OF_TOLERANCE',
      },
    ];

    it.each(cases)(
      'agrees with the synchronous verifier: $name',
      async ({ options, delivery, expected }) => {
        const verify = both({ secret: SECRET, now: () => NOW_S * 1000, ...options });
        const full: DeliveryToVerify = { body: BODY, signature: good, timestamp, ...delivery };
        const fromSync = verify.sync(full);
        expect(codeOf(fromSync)).toBe(expected);
        expect(await verify.async(full)).toEqual(fromSync);
      },
    );

    it('computes the HMAC with crypto.subtle, importing each key once', async () => {
      const importKey = vi.spyOn(globalThis.crypto.subtle, 'importKey');
      const sign = vi.spyOn(globalThis.crypto.subtle, 'sign');
      // The matching key first: the second one must still be computed.
      const verify = api.createReceiverVerifier({
        secret: [SECRET, OTHER_SECRET],
        now: () => NOW_S * 1000,
      });
      for (let i = 0; i < 3; i++) {
        await expect(verify({ body: BODY, signature: good, timestamp })).resolves.toBeUndefined();
      }
      await expect(verify({ body: 'forged', signature: good, timestamp })).rejects.toMatchObject({
        code: 'INVALID_SIGNATURE',
      });
      // Every key on every delivery (no early stop at the second key's match), one import per key.
      expect(sign).toHaveBeenCalledTimes(8);
      expect(importKey).toHaveBeenCalledTimes(2);
    });

    it('refuses by rejecting its promise, never by throwing synchronously', async () => {
      const verify = api.createReceiverVerifier({ secret: SECRET, now: () => NOW_S * 1000 });
      let result: void | Promise<void> = undefined;
      expect(() => {
        result = verify({ body: BODY, signature: undefined, timestamp: undefined });
      }).not.toThrow();
      await expect(result).rejects.toMatchObject({ code: 'MISSING_SIGNATURE', status: 401 });
    });

    it('throws TypeError for a bad option when created, like createVerifier', () => {
      expect(() => api.createReceiverVerifier({ secret: [] })).toThrow(TypeError);
      expect(() =>
        api.createReceiverVerifier({ secret: SECRET, signedContent: 'nope' as 'body' }),
      ).toThrow(TypeError);
    });

    it('keeps concurrent deliveries apart (no state shared across its awaits)', async () => {
      const verify = api.createReceiverVerifier({ secret: SECRET, now: () => NOW_S * 1000 });
      const forged = independent(OTHER_SECRET, `${timestamp}.${BODY}`);
      const deliveries = Array.from({ length: 40 }, (_, i) => ({
        body: BODY,
        signature: i % 3 === 0 ? forged : i % 3 === 1 ? good : `${good.slice(0, -1)}z`,
        timestamp,
      }));
      const outcomes = await Promise.all(deliveries.map((d) => asyncOutcome(verify(d))));
      outcomes.forEach((outcome, i) => {
        expect(codeOf(outcome)).toBe(i % 3 === 1 ? 'ok' : 'INVALID_SIGNATURE');
      });
    });

    it('agrees with the synchronous verifier on random deliveries', async () => {
      const secretArb = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 });
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(secretArb, { minLength: 1, maxLength: 3 }),
          fc.uint8Array({ maxLength: 300 }),
          fc.constantFrom('timestamp.body' as const, 'body' as const),
          fc.integer({ min: -400, max: 400 }),
          fc.array(
            fc.oneof(
              fc.record({ signer: fc.nat(3), tamper: fc.boolean() }),
              fc.constant('garbage' as const),
            ),
            { minLength: 1, maxLength: 4 },
          ),
          fc.constantFrom('string', 'bytes', 'buffer'),
          async (secrets, randomBytes, signedContent, skew, signers, bodyKind) => {
            // A string body is delivered as its UTF-8 bytes: sign those.
            const asText = new TextDecoder().decode(randomBytes);
            const body = bodyKind === 'string' ? encode(asText) : randomBytes;
            const signingSecrets = [...secrets, 'not configured'];
            const signed = signedContent === 'body' ? body : timestampDotBody(timestamp, body);
            const signature = signers
              .map((s) => {
                if (s === 'garbage') return 'sha256=xyz';
                const header = independent(
                  signingSecrets[s.signer % signingSecrets.length] as string,
                  signed,
                );
                return s.tamper
                  ? `${header.slice(0, -1)}${header.endsWith('0') ? '1' : '0'}`
                  : header;
              })
              .join(', ');
            const delivered =
              bodyKind === 'string' ? asText : bodyKind === 'bytes' ? body : body.slice().buffer;
            const verify = both({
              secret: secrets,
              signedContent,
              now: () => (NOW_S + skew) * 1000,
            });
            const delivery = { body: delivered, signature, timestamp };
            expect(await verify.async(delivery)).toEqual(verify.sync(delivery));
          },
        ),
        { numRuns: 300 },
      );
    });
  });

  // workerd always has crypto.subtle: its verifier has no synchronous fallback to test.
  if (!workerd) {
    describe('without crypto.subtle', () => {
      it('is the synchronous verifier on @noble/hashes', () => {
        vi.stubGlobal('crypto', undefined);
        expect((globalThis as { crypto?: unknown }).crypto).toBeUndefined();
        expectSynchronous(api.createReceiverVerifier({ secret: SECRET, now: () => NOW_S * 1000 }));
      });
    });
  }
});

describe('hmac-web matchesAnyAsync', () => {
  const matchesAnyAsync = webBackend.matchesAnyAsync;
  if (matchesAnyAsync === undefined) throw new Error('hmac-web.ts has no async matcher');

  it('is left out by the node:crypto back end', () => {
    expect(nodeBackend.matchesAnyAsync).toBeUndefined();
  });

  it.each([
    ['with crypto.subtle', false],
    ['without crypto.subtle (@noble/hashes)', true],
  ])(
    'matches the right digest among the candidates and nothing else, %s',
    async (_, withoutSubtle) => {
      if (withoutSubtle) vi.stubGlobal('crypto', undefined);
      await fc.assert(
        fc.asyncProperty(
          fc.uint8Array({ maxLength: 80 }),
          fc.uint8Array({ maxLength: 200 }),
          fc.nat(31),
          fc.nat(4),
          async (key, data, at, position) => {
            const right = new Uint8Array(createHmac('sha256', key).update(data).digest());
            const changed = Uint8Array.from(right, (b, i) => (i === at ? (b + 1) % 256 : b));
            const others = [changed, right.subarray(1), new Uint8Array(0), new Uint8Array(33)];
            const mixed = [...others];
            mixed.splice(position, 0, right);
            const bytes = Uint8Array.from(data);
            expect(await matchesAnyAsync(key, bytes, [right])).toBe(true);
            expect(await matchesAnyAsync(key, bytes, others)).toBe(false);
            expect(await matchesAnyAsync(key, bytes, mixed)).toBe(true);
            expect(await matchesAnyAsync(key, bytes, [])).toBe(false);
          },
        ),
        { numRuns: 150 },
      );
    },
  );
});

describe('signedBytes', () => {
  it('is the timestamp, a dot and the body in one buffer, or the body itself', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 100 }),
        fc.stringMatching(/^[0-9]{1,12}$/),
        (body, ts) => {
          expect(signedBytes('timestamp.body', ts, body)).toEqual(
            new Uint8Array(timestampDotBody(ts, body)),
          );
          expect(signedBytes('body', ts, body)).toBe(body); // no copy
        },
      ),
    );
  });

  it('copies a body held in a SharedArrayBuffer (WebCrypto refuses one)', () => {
    const shared = new Uint8Array(new SharedArrayBuffer(4));
    shared.set([1, 2, 3, 4]);
    const data = signedBytes('body', '1', shared);
    expect(data.buffer).toBeInstanceOf(ArrayBuffer);
    expect(data).toEqual(new Uint8Array([1, 2, 3, 4]));
  });
});
