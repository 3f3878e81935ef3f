import { backend } from '#hmac';
import { WebhookVerificationError } from '../errors/webhook-verification-error.js';
import { decodeHexInto, fromHex, toHmacPart, type RawBody } from './bytes.js';
import type { HmacPart } from './hmac-backend.js';
import { secretKeys, type Secret } from './secrets.js';

// The signature's wire format: the two headers, the signed content, then the check.

/** Most signatures accepted in one header (a rotating sender sends two or three). */
export const MAX_SIGNATURES = 8;
const SCHEME = 'sha256=';
const DIGEST_BYTES = 32;
const TIMESTAMP_PATTERN = /^[0-9]{1,12}$/;

/** A header value as frameworks hand it over: absent, one string, or repeated. */
export type HeaderValue = string | readonly string[] | null | undefined;

/** One header's text; `undefined` when absent or empty. Repeated values are joined with ", ". */
export function headerText(value: HeaderValue): string | undefined {
  if (value === null || value === undefined) return undefined;
  // Node joins repeated custom headers with ", "; do the same for arrays.
  const text = typeof value === 'string' ? value : value.join(', ');
  if (text.length === 0) return undefined;
  // Only an all-blank value needs the trim; a value starting with a visible character cannot be.
  return text.charCodeAt(0) > 32 || text.trim() !== '' ? text : undefined;
}

/**
 * Parses `X-Service-Signature`: one or more `sha256=<64 hex>` separated by `,` with optional
 * spaces. Any malformed item makes the whole header invalid. `into` (32 bytes), when given,
 * receives the usual single signature instead of a new array of bytes.
 */
export function parseSignatureHeader(text: string, into?: Uint8Array): Uint8Array[] {
  // Fast path: the usual single signature with nothing around it.
  if (text.length === SCHEME.length + DIGEST_BYTES * 2 && text.startsWith(SCHEME)) {
    const digest = into ?? new Uint8Array(DIGEST_BYTES);
    if (decodeHexInto(text, SCHEME.length, digest)) return [digest];
  }
  const items = text.split(',');
  if (items.length > MAX_SIGNATURES) {
    throw new WebhookVerificationError(
      'INVALID_SIGNATURE',
      `The signature header holds more than ${MAX_SIGNATURES} signatures.`,
    );
  }
  return items.map((raw) => {
    const item = raw.replace(/^[ \t]+|[ \t]+$/g, '');
    const digest = item.startsWith(SCHEME)
      ? fromHex(item.slice(SCHEME.length), DIGEST_BYTES)
      : undefined;
    if (digest === undefined) {
      throw new WebhookVerificationError(
        'INVALID_SIGNATURE',
        'The signature header is malformed: expected "sha256=" and 64 hex digits per signature.',
      );
    }
    return digest;
  });
}

/** Parses `X-Service-Timestamp`: Unix seconds, ASCII digits only, at most 12. */
export function parseTimestampHeader(text: string): number {
  if (!TIMESTAMP_PATTERN.test(text)) {
    throw new WebhookVerificationError(
      'INVALID_TIMESTAMP',
      'The timestamp header must be Unix time in whole seconds (1 to 12 ASCII digits).',
    );
  }
  return Number(text);
}

/** Request headers as frameworks hand them over: a Web `Headers` or a plain record. */
export type HeadersInput = Headers | Record<string, string | readonly string[] | undefined>;

function isHeaders(headers: HeadersInput): headers is Headers {
  return typeof (headers as { get?: unknown }).get === 'function';
}

/**
 * A header's value, by lower-case `name`, matched case-insensitively. A Web `Headers` already
 * joins repeated values; in a record, every key that matches contributes (so `X-A` and `x-a` are
 * both seen, like a repeated header) and the verifier joins them with `, `.
 */
export function getHeader(headers: HeadersInput, name: string): HeaderValue {
  if (isHeaders(headers)) return headers.get(name);
  let found: string | readonly string[] | undefined;
  let values: string[] | undefined; // only when the header occurs under several keys
  // for-in, not Object.keys: V8 walks a record's own keys from its cached enumeration without an
  // array per lookup (two lookups per delivery). Header records are plain objects, or Node's
  // null-prototype `headers`; an inherited key that matches is skipped.
  for (const key in headers) {
    // The length test spares a lower-casing of nearly every other header.
    if (key.length !== name.length || key.toLowerCase() !== name) continue;
    if (!Object.hasOwn(headers, key)) continue;
    const value = headers[key];
    if (typeof value !== 'string' && !Array.isArray(value)) continue;
    if (found === undefined) {
      found = value as string | readonly string[];
      continue;
    }
    values ??= typeof found === 'string' ? [found] : [...found];
    if (typeof value === 'string') values.push(value);
    else values.push(...(value as readonly string[]));
  }
  return values ?? found;
}

/**
 * What the HMAC covers. `'timestamp.body'` (default): the timestamp header's exact text, `.`, then
 * the raw body. `'body'`: the raw body alone (the timestamp is then not bound by the signature).
 */
export type SignedContent = 'timestamp.body' | 'body';

/**
 * The parts to feed the HMAC, without concatenating (no copy of the body). `timestamp` is ASCII
 * digits (checked before), so `timestamp + '.'` is exactly its bytes and the dot.
 */
export function signedParts(
  mode: SignedContent,
  timestamp: string,
  body: HmacPart,
): readonly HmacPart[] {
  return mode === 'body' ? [body] : [`${timestamp}.`, body];
}

/** A view with the type WebCrypto takes: the same bytes, copied only when not on an ArrayBuffer. */
function onArrayBuffer(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer
    ? (bytes as Uint8Array<ArrayBuffer>)
    : Uint8Array.from(bytes);
}

/**
 * The signed content in one buffer, for HMACs that take one (WebCrypto): the body itself in
 * `'body'` mode (no copy), else the timestamp's ASCII digits, `.` and the body copied after them.
 */
export function signedBytes(
  mode: SignedContent,
  timestamp: string,
  body: Uint8Array,
): Uint8Array<ArrayBuffer> {
  if (mode === 'body') return onArrayBuffer(body);
  // `timestamp` is 1 to 12 ASCII digits (checked before): one byte per character.
  const data = new Uint8Array(timestamp.length + 1 + body.length);
  for (let i = 0; i < timestamp.length; i++) data[i] = timestamp.charCodeAt(i);
  data[timestamp.length] = 0x2e;
  data.set(body, timestamp.length + 1);
  return data;
}

const SIGNED_CONTENT_MODES: ReadonlySet<string> = new Set(['timestamp.body', 'body']);

/** Default tolerance between the sender's timestamp and the receiver's clock, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** Options shared by `verifySignature` and the receiver's verifier. */
export interface VerifierOptions {
  /** The signing secret, or several while rotating. Its UTF-8 bytes are the HMAC key. */
  secret: Secret;
  /** Largest allowed `|now - timestamp|`, in seconds. Default 300. */
  tolerance?: number;
  /** What the signature covers. Default `'timestamp.body'`. */
  signedContent?: SignedContent;
  /** Clock in milliseconds, like `Date.now`. */
  now?: () => number;
}

/** The three things a delivery is checked by. */
export interface DeliveryToVerify {
  /** The raw request body exactly as received. */
  body: RawBody;
  /** The signature header's value (`sha256=<hex>`, several separated by `,`). */
  signature: HeaderValue;
  /** The timestamp header's value (Unix seconds). */
  timestamp: HeaderValue;
}

/** A verification function with its secrets and options prepared once. */
export type Verifier = (delivery: DeliveryToVerify) => void;

/** A verifier's options, resolved and checked once. Internal (the receiver's verifier shares it). */
export interface VerifierSettings {
  keys: readonly Uint8Array[];
  tolerance: number;
  mode: SignedContent;
  now: () => number;
}
type Settings = VerifierSettings;

function checkOptions(tolerance: number, mode: SignedContent): void {
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError('tolerance must be a non-negative number of seconds.');
  }
  if (!SIGNED_CONTENT_MODES.has(mode)) {
    throw new TypeError(`signedContent must be 'timestamp.body' or 'body'.`);
  }
}

/**
 * The refusals of `check`, one function each, so that the receiver's asynchronous verifier
 * (`receiver-verifier.ts`) throws exactly the same errors. Internal.
 */
export const refusal = {
  missingSignature: (): WebhookVerificationError =>
    new WebhookVerificationError('MISSING_SIGNATURE', 'The signature header is missing.'),
  missingTimestamp: (): WebhookVerificationError =>
    new WebhookVerificationError('MISSING_TIMESTAMP', 'The timestamp header is missing.'),
  noMatch: (): WebhookVerificationError =>
    new WebhookVerificationError(
      'INVALID_SIGNATURE',
      'No signature matches the body and any configured secret.',
    ),
  outOfTolerance: (tolerance: number): WebhookVerificationError =>
    new WebhookVerificationError(
      'TIMESTAMP_OUT_OF_TOLERANCE',
      `The timestamp is more than ${tolerance} seconds away from the receiver's clock.`,
    ),
};

/** Whether `seconds` (the sender's timestamp) is too far from the settings' clock. Internal. */
export function outOfTolerance(settings: Settings, seconds: number): boolean {
  return Math.abs(settings.now() / 1000 - seconds) > settings.tolerance;
}

/**
 * Receives the usual single signature's bytes, so that no array is allocated per delivery. Shared
 * safely: from parsing to comparison, `check` runs no code but ours and the HMAC back end's.
 */
const scratch = /* @__PURE__ */ new Uint8Array(32);

/** Checks one delivery in the documented order: headers present, timestamp format, signature, tolerance. */
function check(settings: Settings, { body, signature, timestamp }: DeliveryToVerify): void {
  const signatureText = headerText(signature);
  if (signatureText === undefined) throw refusal.missingSignature();
  const timestampText = headerText(timestamp);
  if (timestampText === undefined) throw refusal.missingTimestamp();
  const seconds = parseTimestampHeader(timestampText);
  const candidates = parseSignatureHeader(signatureText, scratch);

  const parts = signedParts(settings.mode, timestampText, toHmacPart(body));
  let matched = false;
  // Every key against every candidate, without stopping early.
  for (const key of settings.keys) {
    matched = backend.matchesAny(key, parts, candidates) || matched;
  }
  if (!matched) throw refusal.noMatch();
  if (outOfTolerance(settings, seconds)) throw refusal.outOfTolerance(settings.tolerance);
}

/**
 * Prepares verification for many deliveries: the secrets are encoded once. The returned function
 * returns nothing or throws `WebhookVerificationError`, checking in the documented order: headers
 * present, timestamp format, signature, tolerance.
 */
export function createVerifier(options: VerifierOptions): Verifier {
  const settings = verifierSettings(options);
  return (delivery) => {
    check(settings, delivery);
  };
}

/**
 * `options` resolved (defaults applied, secrets encoded) and checked: `TypeError` for a missing
 * secret or a bad option. Internal: `createVerifier` and the receiver's verifier share it.
 */
export function verifierSettings(options: VerifierOptions): VerifierSettings {
  const settings: Settings = {
    keys: secretKeys(options.secret),
    tolerance: options.tolerance ?? DEFAULT_TOLERANCE_SECONDS,
    mode: options.signedContent ?? 'timestamp.body',
    now: options.now ?? Date.now,
  };
  checkOptions(settings.tolerance, settings.mode);
  return settings;
}

/** Options of `verifySignature`. */
export interface VerifySignatureOptions extends DeliveryToVerify {
  secret: Secret;
  tolerance?: number;
  signedContent?: SignedContent;
  /** The current time: milliseconds since the epoch, a `Date`, or a clock. Default `Date.now()`. */
  now?: number | Date | (() => number);
}

function clock(now: VerifySignatureOptions['now']): () => number {
  if (now === undefined) return Date.now;
  if (typeof now === 'function') return now;
  const ms = now instanceof Date ? now.getTime() : now;
  return () => ms;
}

/** Encoded keys of recently used secrets, so that one-off calls do not re-encode them each time. */
const keyCache = new Map<string, Uint8Array[]>();
const KEY_CACHE_SIZE = 16;

function cachedKeys(secret: Secret): Uint8Array[] {
  if (typeof secret !== 'string') return secretKeys(secret);
  let keys = keyCache.get(secret);
  if (keys === undefined) {
    keys = secretKeys(secret);
    if (keyCache.size >= KEY_CACHE_SIZE) keyCache.clear();
    keyCache.set(secret, keys);
  }
  return keys;
}

/**
 * Verifies one webhook delivery. Returns nothing when valid; throws
 * `WebhookVerificationError` with `code` and `status` otherwise. Throws `TypeError` for a missing
 * secret or a bad option.
 *
 * @example
 * verifySignature({
 *   body: rawBody,
 *   signature: req.headers['x-service-signature'],
 *   timestamp: req.headers['x-service-timestamp'],
 *   secret: process.env.CHURN_RISK_WEBHOOK_SECRET!,
 * });
 */
export function verifySignature(options: VerifySignatureOptions): void {
  const settings: Settings = {
    keys: cachedKeys(options.secret),
    tolerance: options.tolerance ?? DEFAULT_TOLERANCE_SECONDS,
    mode: options.signedContent ?? 'timestamp.body',
    now: clock(options.now),
  };
  checkOptions(settings.tolerance, settings.mode);
  check(settings, options);
}
