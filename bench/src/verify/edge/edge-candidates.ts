/**
 * HMAC-SHA256 verification of one signed alert, per back end, written with Web APIs only so that
 * the same module runs in workerd, Bun, Deno and Node. Every candidate does one delivery's work:
 * the `sha256=` header's hex decoded, the HMAC over `timestamp.body`, a constant-time comparison.
 * `@noble/hashes` and `node:crypto` are core's own back ends (`hmac-web.ts`, `hmac-node.ts`);
 * `crypto.subtle` imports the key once and signs (or verifies) per delivery, as core's async back
 * end does; the last two candidates are core's own verifiers as resolved in the runtime.
 */
import { backend as nobleBackend } from '../../../../packages/core/src/signature/hmac-web.js';
import type { HmacBackend } from '../../../../packages/core/src/signature/hmac-backend.js';
import { createReceiverVerifier } from '../../../../packages/core/src/signature/receiver-verifier.js';
import { createVerifier } from '../../../../packages/core/src/signature/verify.js';

export const EDGE_SECRET = 'whsec_bench_edge_7d1e0c4b2a9f4e6d';
const encoder = new TextEncoder();

/** One thing to measure: `batch(n)` verifies the delivery `n` times (throws on a mismatch). */
export interface EdgeCandidate {
  name: string;
  batch(n: number): void | Promise<void>;
}

/** A `churn_risk_alert` JSON body of about `bytes` bytes (padded with a `notes` field). */
export function edgeAlertBody(bytes: number): string {
  const alert = {
    event: 'churn_risk_alert',
    userId: 'user_edge_bench',
    score: 0.82,
    tier: 'high',
    signals: ['payment_failed', 'usage_drop'],
    recommendation: 'Payment failed: ask the customer to update their payment method.',
    triggeredAt: '2026-11-24T10:00:00.000Z',
  };
  const base = JSON.stringify(alert);
  const pad = Math.max(0, bytes - base.length - ',"notes":""'.length);
  return pad === 0 ? base : JSON.stringify({ ...alert, notes: 'n'.repeat(pad) });
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const HEX = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX['0123456789abcdef'.charCodeAt(i)] = i;
  HEX['0123456789ABCDEF'.charCodeAt(i)] = i;
}

/** Table-driven hex decoding (what core does), so that the shared work stays small. */
function fromHex(text: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(text.length >> 1);
  for (let i = 0; i < out.length; i++) {
    const hi = HEX[text.charCodeAt(2 * i) & 127] as number;
    const lo = HEX[text.charCodeAt(2 * i + 1) & 127] as number;
    if (hi < 0 || lo < 0) throw new Error('not hex');
    out[i] = (hi << 4) | lo;
  }
  return out;
}

function equalConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** The header value as received: decoded on every delivery, as the receiver does. */
function signatureBytes(header: string): Uint8Array<ArrayBuffer> {
  if (!header.startsWith('sha256=')) throw new Error('bad scheme');
  return fromHex(header.slice(7));
}

function mismatch(): never {
  throw new Error('signature mismatch');
}

/** A delivery: body bytes and the two header values, signed with `EDGE_SECRET`. */
export interface EdgeDelivery {
  body: Uint8Array;
  signature: string;
  timestamp: string;
}

export function edgeDelivery(bodyText: string, tamper = false): EdgeDelivery {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const key = encoder.encode(EDGE_SECRET);
  const digest = nobleBackend.hmacSha256(key, [`${timestamp}.`, encoder.encode(bodyText)]);
  const body = encoder.encode(
    tamper ? bodyText.replace('"tier":"high"', '"tier":"hihg"') : bodyText,
  );
  return { body, signature: `sha256=${hex(digest)}`, timestamp };
}

/** Candidate names, also the table's rows. */
export const NOBLE = '@noble/hashes (core hmac-web.ts)';
export const NODE = 'node:crypto (core hmac-node.ts)';
export const SUBTLE_SIGN = 'crypto.subtle sign + compare (key imported once)';
export const SUBTLE_VERIFY = 'crypto.subtle verify (key imported once)';
export const CORE_AS_RESOLVED = "core createVerifier (this runtime's #hmac)";
export const CORE_RECEIVER = "core receiver verifier (createReceiverVerifier, the receiver's path)";
/** The candidates that are core's own verifiers, not back ends. */
export const CORE_VERIFIERS: readonly string[] = [CORE_AS_RESOLVED, CORE_RECEIVER];

function backendCandidate(name: string, backend: HmacBackend, d: EdgeDelivery): EdgeCandidate {
  const key = encoder.encode(EDGE_SECRET);
  return {
    name,
    batch(n) {
      for (let i = 0; i < n; i++) {
        const candidates = [signatureBytes(d.signature)];
        if (!backend.matchesAny(key, [`${d.timestamp}.`, d.body], candidates)) mismatch();
      }
    },
  };
}

/** `timestamp.` and the body in one buffer: what WebCrypto takes (one copy per delivery). */
function signedBytes(d: EdgeDelivery): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${d.timestamp}.`);
  const data = new Uint8Array(prefix.length + d.body.length);
  data.set(prefix, 0);
  data.set(d.body, prefix.length);
  return data;
}

async function subtleCandidates(d: EdgeDelivery): Promise<EdgeCandidate[]> {
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(EDGE_SECRET),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign', 'verify'],
  );
  return [
    {
      name: SUBTLE_SIGN,
      async batch(n) {
        for (let i = 0; i < n; i++) {
          const expected = signatureBytes(d.signature);
          const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, signedBytes(d)));
          if (!equalConstantTime(mac, expected)) mismatch();
        }
      },
    },
    {
      name: SUBTLE_VERIFY,
      async batch(n) {
        for (let i = 0; i < n; i++) {
          const given = signatureBytes(d.signature);
          if (!(await crypto.subtle.verify('HMAC', key, given, signedBytes(d)))) mismatch();
        }
      },
    },
  ];
}

function coreCandidate(d: EdgeDelivery): EdgeCandidate {
  const verify = createVerifier({ secret: EDGE_SECRET });
  const delivery = { body: d.body, signature: d.signature, timestamp: d.timestamp };
  return {
    name: CORE_AS_RESOLVED,
    batch(n) {
      for (let i = 0; i < n; i++) verify(delivery);
    },
  };
}

/**
 * Core's `createReceiverVerifier` as resolved here: synchronous on node:crypto, `crypto.subtle`
 * (awaited) where `#hmac` is the web back end and WebCrypto exists. Awaited only when it returns
 * a promise, as the receiver does.
 */
function coreReceiverCandidate(d: EdgeDelivery): EdgeCandidate {
  const verify = createReceiverVerifier({ secret: EDGE_SECRET });
  const delivery = { body: d.body, signature: d.signature, timestamp: d.timestamp };
  return {
    name: CORE_RECEIVER,
    async batch(n) {
      for (let i = 0; i < n; i++) {
        const pending = verify(delivery);
        if (pending !== undefined) await pending;
      }
    },
  };
}

/**
 * Which back end core's `createVerifier` uses here (its `#hmac` import as this runtime or bundler
 * resolved it): each known back end's `matchesAny` is wrapped during one verification.
 */
export function coreBackendName(backends: readonly HmacBackend[], d: EdgeDelivery): string {
  const used: string[] = [];
  const originals = backends.map((b) => b.matchesAny);
  backends.forEach((b) => {
    const original = b.matchesAny;
    (b as { matchesAny: HmacBackend['matchesAny'] }).matchesAny = (...args) => {
      used.push(b.name);
      return original.apply(b, args);
    };
  });
  try {
    createVerifier({ secret: EDGE_SECRET })(d);
  } finally {
    backends.forEach((b, i) => {
      (b as { matchesAny: HmacBackend['matchesAny'] }).matchesAny = originals[
        i
      ] as HmacBackend['matchesAny'];
    });
  }
  return used[0] ?? 'unknown (not a back end this benchmark knows)';
}

/**
 * The candidates for a body of about `bytes` bytes, each checked first: it must accept the
 * genuine delivery and reject one with a changed byte.
 */
export async function edgeCandidates(
  bytes: number,
  nodeBackend: HmacBackend | undefined,
): Promise<EdgeCandidate[]> {
  const text = edgeAlertBody(bytes);
  const build = async (d: EdgeDelivery): Promise<EdgeCandidate[]> => [
    backendCandidate(NOBLE, nobleBackend, d),
    ...(nodeBackend === undefined ? [] : [backendCandidate(NODE, nodeBackend, d)]),
    ...(await subtleCandidates(d)),
    coreCandidate(d),
    coreReceiverCandidate(d),
  ];
  const genuine = await build(edgeDelivery(text));
  const forged = await build(edgeDelivery(text, true));
  for (const [i, candidate] of genuine.entries()) {
    await candidate.batch(2);
    let rejected = false;
    try {
      await forged[i]?.batch(1);
    } catch {
      rejected = true;
    }
    if (!rejected) throw new Error(`${candidate.name} accepted a tampered delivery`);
  }
  return genuine;
}

export { nobleBackend };
