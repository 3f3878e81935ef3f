import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  isWebhookVerificationError,
  type WebhookVerificationError,
} from '../errors/webhook-verification-error.js';

type SignatureApi = typeof import('./index.js');

const SECRET = 'whsec_verify_3b9d71c0';
const OTHER_SECRET = 'whsec_other_8e21aa4f';
const NOW_S = 1_767_225_600; // 2026-01-01T00:00:00Z
const BODY = '{"event":"churn_risk_alert","userId":"u_1"}';

/** The signature as an independent HMAC computes it. */
function independent(secret: string, signedText: string): string {
  return `sha256=${createHmac('sha256', secret).update(signedText).digest('hex')}`;
}

/** The error thrown by `run`, or a failure when nothing is thrown. */
function thrown(run: () => void): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    if (!isWebhookVerificationError(error)) throw error;
    return error;
  }
  throw new Error('expected a WebhookVerificationError');
}

// The whole sign/verify path runs once on each HMAC back end (`#hmac` swapped per block).
describe.each(['node:crypto', '@noble/hashes'] as const)(
  'signing and verification on %s',
  (name) => {
    let api: SignatureApi;

    beforeAll(async () => {
      vi.resetModules();
      vi.doMock('#hmac', () =>
        name === 'node:crypto' ? import('./hmac-node.js') : import('./hmac-web.js'),
      );
      api = await import('./index.js');
      const { backend } = await import('#hmac');
      expect(backend.name).toBe(name);
      vi.doUnmock('#hmac');
    });

    function verify(overrides: Partial<Parameters<SignatureApi['verifySignature']>[0]> = {}): void {
      api.verifySignature({
        body: BODY,
        signature: independent(SECRET, `${NOW_S}.${BODY}`),
        timestamp: String(NOW_S),
        secret: SECRET,
        now: NOW_S * 1000,
        ...overrides,
      });
    }

    describe('signPayload', () => {
      it('signs "timestamp.body" like an independent HMAC, for strings and bytes', () => {
        const expected = independent(SECRET, `${NOW_S}.${BODY}`);
        expect(api.signPayload({ body: BODY, secret: SECRET, timestamp: NOW_S })).toEqual({
          signature: expected,
          timestamp: String(NOW_S),
        });
        const bytes = new TextEncoder().encode(BODY);
        expect(api.signPayload({ body: bytes, secret: SECRET, timestamp: NOW_S }).signature).toBe(
          expected,
        );
        expect(
          api.signPayload({ body: bytes.buffer, secret: SECRET, timestamp: NOW_S }).signature,
        ).toBe(expected);
      });

      it('signs the body alone with signedContent "body", and once per secret when rotating', () => {
        const signed = api.signPayload({
          body: BODY,
          secret: SECRET,
          timestamp: NOW_S,
          signedContent: 'body',
        });
        expect(signed.signature).toBe(independent(SECRET, BODY));
        const both = api.signPayload({
          body: BODY,
          secret: [SECRET, OTHER_SECRET],
          timestamp: NOW_S,
        });
        expect(both.signature).toBe(
          `${independent(SECRET, `${NOW_S}.${BODY}`)}, ${independent(OTHER_SECRET, `${NOW_S}.${BODY}`)}`,
        );
      });

      it('takes a Date or whole seconds and refuses a negative time or a missing secret', () => {
        expect(
          api.signPayload({ body: BODY, secret: SECRET, timestamp: new Date(NOW_S * 1000 + 999) })
            .timestamp,
        ).toBe(String(NOW_S));
        expect(() => api.signPayload({ body: BODY, secret: SECRET, timestamp: -1 })).toThrow(
          TypeError,
        );
        // Milliseconds by mistake (13 digits) would give a header every receiver refuses.
        expect(() =>
          api.signPayload({ body: BODY, secret: SECRET, timestamp: NOW_S * 1000 }),
        ).toThrow(/not milliseconds/);
        expect(
          api.signPayload({ body: BODY, secret: SECRET, timestamp: 999_999_999_999 }).timestamp,
        ).toBe('999999999999');
        expect(() => api.signPayload({ body: BODY, secret: '' })).toThrow(TypeError);
        expect(() => api.signPayload({ body: BODY, secret: [] })).toThrow(TypeError);
      });
    });

    describe('verifySignature', () => {
      it('accepts a delivery signed by an independent HMAC, with the body as string or bytes', () => {
        expect(() => verify()).not.toThrow();
        expect(() => verify({ body: new TextEncoder().encode(BODY) })).not.toThrow();
      });

      it('accepts a timestamp exactly at the tolerance in both directions, and refuses one second more', () => {
        for (const offset of [-300, 300, 0]) {
          expect(() => verify({ now: (NOW_S + offset) * 1000 })).not.toThrow();
        }
        for (const offset of [-301, 301, 300.001, -300.001]) {
          expect(thrown(() => verify({ now: (NOW_S + offset) * 1000 })).code).toBe(
            'TIMESTAMP_OUT_OF_TOLERANCE',
          );
        }
      });

      it('uses a custom tolerance and a clock function', () => {
        expect(() => verify({ tolerance: 10, now: () => (NOW_S + 10) * 1000 })).not.toThrow();
        const error = thrown(() => verify({ tolerance: 10, now: () => (NOW_S - 11) * 1000 }));
        expect(error).toMatchObject({ code: 'TIMESTAMP_OUT_OF_TOLERANCE', status: 401 });
        expect(() => verify({ tolerance: 0, now: new Date(NOW_S * 1000) })).not.toThrow();
        expect(() => verify({ tolerance: -1 })).toThrow(TypeError);
      });

      it('accepts any configured secret (receiver-side rotation)', () => {
        expect(() => verify({ secret: [OTHER_SECRET, SECRET] })).not.toThrow();
        expect(thrown(() => verify({ secret: [OTHER_SECRET] })).code).toBe('INVALID_SIGNATURE');
        expect(() => verify({ secret: [] })).toThrow(TypeError);
        expect(() => verify({ secret: [SECRET, ''] })).toThrow(TypeError);
      });

      it('accepts a header with several signatures when any one matches (sender-side rotation)', () => {
        const good = independent(SECRET, `${NOW_S}.${BODY}`);
        const stale = independent(OTHER_SECRET, `${NOW_S}.${BODY}`);
        expect(() => verify({ signature: `${stale},${good}` })).not.toThrow();
        expect(() => verify({ signature: `${good} ,  ${stale}` })).not.toThrow();
        expect(() => verify({ signature: [stale, good] })).not.toThrow(); // a repeated header
        expect(thrown(() => verify({ signature: `${stale}, ${stale}` })).code).toBe(
          'INVALID_SIGNATURE',
        );
      });

      it('with signedContent "body" binds only the body, still checking the timestamp', () => {
        const signature = independent(SECRET, BODY);
        expect(() => verify({ signature, signedContent: 'body' })).not.toThrow();
        expect(() =>
          verify({ signature, signedContent: 'body', timestamp: String(NOW_S - 5) }),
        ).not.toThrow();
        expect(thrown(() => verify({ signature })).code).toBe('INVALID_SIGNATURE');
        expect(thrown(() => verify({ signedContent: 'body' })).code).toBe('INVALID_SIGNATURE');
        expect(
          thrown(() => verify({ signature, signedContent: 'body', timestamp: 'soon' })).code,
        ).toBe('INVALID_TIMESTAMP');
        expect(
          thrown(() => verify({ signature, signedContent: 'body', timestamp: String(NOW_S - 301) }))
            .code,
        ).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
      });

      it('binds the exact timestamp text: a leading zero changes the signed bytes', () => {
        expect(thrown(() => verify({ timestamp: `0${NOW_S}` })).code).toBe('INVALID_SIGNATURE');
        const signature = independent(SECRET, `0${NOW_S}.${BODY}`);
        expect(() => verify({ signature, timestamp: `0${NOW_S}` })).not.toThrow();
      });

      it('checks in the documented order: headers present, timestamp format, signature, tolerance', () => {
        const far = (NOW_S + 10_000) * 1000;
        expect(thrown(() => verify({ signature: undefined, timestamp: undefined })).code).toBe(
          'MISSING_SIGNATURE',
        );
        expect(thrown(() => verify({ timestamp: null, signature: 'junk' })).code).toBe(
          'MISSING_TIMESTAMP',
        );
        expect(thrown(() => verify({ timestamp: 'x', signature: 'junk' })).code).toBe(
          'INVALID_TIMESTAMP',
        );
        expect(thrown(() => verify({ signature: 'junk', now: far })).code).toBe(
          'INVALID_SIGNATURE',
        );
        expect(thrown(() => verify({ body: `${BODY} `, now: far })).code).toBe('INVALID_SIGNATURE');
        expect(thrown(() => verify({ now: far })).code).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
      });

      it('never puts the secret or the expected signature into an error', () => {
        const expected = independent(SECRET, `${NOW_S}.${BODY}`);
        const expectedHex = expected.slice('sha256='.length);
        const cases: Parameters<typeof verify>[0][] = [
          { signature: independent(OTHER_SECRET, `${NOW_S}.${BODY}`) },
          { signature: `sha256=${expectedHex.slice(0, 63)}` },
          { signature: 'sha1=abc' },
          { body: 'changed' },
          { timestamp: 'abc' },
          { signature: undefined },
          { timestamp: undefined },
          { now: 0 },
        ];
        for (const overrides of cases) {
          const error = thrown(() => verify(overrides));
          const everything = `${error.message} ${JSON.stringify(error)} ${String(error.stack)}`;
          expect(everything).not.toContain(SECRET);
          expect(everything).not.toContain(expectedHex);
          expect(everything.toLowerCase()).not.toContain(expectedHex.slice(0, 16));
        }
      });
    });

    describe('createVerifier', () => {
      it('keeps its answers right across alternating deliveries (no state leaks between calls)', () => {
        const verifier = api.createVerifier({ secret: SECRET, now: () => NOW_S * 1000 });
        const good = independent(SECRET, `${NOW_S}.${BODY}`);
        const forged = independent(OTHER_SECRET, `${NOW_S}.${BODY}`);
        const malformed = `${good.slice(0, -1)}z`;
        for (let round = 0; round < 3; round++) {
          expect(() =>
            verifier({ body: BODY, signature: good, timestamp: String(NOW_S) }),
          ).not.toThrow();
          expect(
            thrown(() => verifier({ body: BODY, signature: forged, timestamp: String(NOW_S) }))
              .code,
          ).toBe('INVALID_SIGNATURE');
          expect(
            thrown(() => verifier({ body: BODY, signature: malformed, timestamp: String(NOW_S) }))
              .code,
          ).toBe('INVALID_SIGNATURE');
          // One-shot calls in between share nothing that could make the next verification pass.
          expect(() => verify()).not.toThrow();
          expect(thrown(() => verify({ signature: forged })).code).toBe('INVALID_SIGNATURE');
        }
      });
    });
  },
);
