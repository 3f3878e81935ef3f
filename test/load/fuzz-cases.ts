/**
 * The fuzzing cases of `receiver-fuzz.test.ts`: generators of deliveries (methods, header-name case,
 * signatures, timestamps, bodies, encodings, sizes) and, for each, what the receiver must answer.
 * The status table's statuses are written out here rather than imported, as an independent oracle.
 */
import fc from 'fast-check';
import { createHmac } from 'node:crypto';
import { NOW_MS, NOW_S } from '../conformance/fixtures.js';

export const SECRET = 'whsec_fuzz_91b3f0e2';
export const OTHER_SECRET = 'whsec_fuzz_other_55aa';
export const MAX_BODY = 1024;
export const TOLERANCE = 300;

/** The status of each error code in the receiver's status table, written out here rather than imported. */
export const SPEC_STATUS: Readonly<Record<string, number>> = {
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

/** One generated delivery, and what the receiver must answer. */
export interface FuzzCase {
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

export const encoder = new TextEncoder();

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

export const caseArb = fc
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
    // The signed bytes (`timestamp.body`), computed here independently of the core's signer.
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
