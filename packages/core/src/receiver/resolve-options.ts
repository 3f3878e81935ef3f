import type { SignedContent } from '../signature/signed-content.js';
import { DEFAULT_TOLERANCE_SECONDS } from '../signature/verify.js';
import { secretKeys } from '../signature/secrets.js';
import { createMemoryDedupeStore } from './memory-dedupe-store.js';
import { resolveRetryPolicy, type RetryPolicy } from './retry-policy.js';
import type { DedupeStore, ReceiverOptions } from './types.js';

/** The receiver's defaults, SPEC section 4. */
export const RECEIVER_DEFAULTS = Object.freeze({
  tolerance: DEFAULT_TOLERANCE_SECONDS,
  signedContent: 'timestamp.body',
  signatureHeader: 'x-service-signature',
  timestampHeader: 'x-service-timestamp',
  maxBodyBytes: 1_048_576,
  mode: 'async',
  concurrency: 10,
  maxQueue: 10_000,
  dedupeTtlMs: 72 * 3_600_000,
  dedupeMaxEntries: 100_000,
});

/** Options with every default filled in and checked. */
export interface ResolvedOptions {
  secret: ReceiverOptions['secret'];
  tolerance: number;
  signedContent: SignedContent;
  signatureHeader: string;
  timestampHeader: string;
  maxBodyBytes: number;
  mode: 'async' | 'sync';
  concurrency: number;
  maxQueue: number;
  retry: RetryPolicy;
  dedupe: { store: DedupeStore; ttlMs: number } | undefined;
  now: () => number;
}

function positiveInteger(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new TypeError(`${name} must be an integer of at least ${min}.`);
  }
  return value;
}

function headerName(name: string, value: string): string {
  if (typeof value !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value)) {
    throw new TypeError(`${name} must be a valid HTTP header name.`);
  }
  return value.toLowerCase();
}

/**
 * Fills in the defaults and rejects bad configuration with a `TypeError` at creation time (a
 * missing or empty secret, a negative limit), never at the first delivery.
 */
export function resolveOptions(options: ReceiverOptions): ResolvedOptions {
  if (typeof (options as unknown) !== 'object' || (options as unknown) === null) {
    throw new TypeError('createReceiver needs an options object with a `secret`.');
  }
  secretKeys(options.secret); // throws TypeError for a missing or empty secret
  const mode = options.mode ?? RECEIVER_DEFAULTS.mode;
  if (!['async', 'sync'].includes(mode)) throw new TypeError(`mode must be 'async' or 'sync'.`);
  const now = options.now ?? Date.now;
  if (typeof (now as unknown) !== 'function')
    throw new TypeError('now must be a function returning milliseconds.');

  let dedupe: ResolvedOptions['dedupe'];
  if (options.dedupe !== false) {
    const settings = options.dedupe ?? {};
    const ttlMs = positiveInteger(
      'dedupe.ttlMs',
      settings.ttlMs ?? RECEIVER_DEFAULTS.dedupeTtlMs,
      1,
    );
    const maxEntries = positiveInteger(
      'dedupe.maxEntries',
      settings.maxEntries ?? RECEIVER_DEFAULTS.dedupeMaxEntries,
      1,
    );
    dedupe = { ttlMs, store: settings.store ?? createMemoryDedupeStore({ maxEntries, now }) };
  }

  return {
    secret: options.secret,
    tolerance: options.tolerance ?? RECEIVER_DEFAULTS.tolerance,
    signedContent: options.signedContent ?? RECEIVER_DEFAULTS.signedContent,
    signatureHeader: headerName(
      'signatureHeader',
      options.signatureHeader ?? RECEIVER_DEFAULTS.signatureHeader,
    ),
    timestampHeader: headerName(
      'timestampHeader',
      options.timestampHeader ?? RECEIVER_DEFAULTS.timestampHeader,
    ),
    maxBodyBytes: positiveInteger(
      'maxBodyBytes',
      options.maxBodyBytes ?? RECEIVER_DEFAULTS.maxBodyBytes,
      1,
    ),
    mode,
    concurrency: positiveInteger(
      'concurrency',
      options.concurrency ?? RECEIVER_DEFAULTS.concurrency,
      1,
    ),
    maxQueue: positiveInteger('maxQueue', options.maxQueue ?? RECEIVER_DEFAULTS.maxQueue, 0),
    retry: resolveRetryPolicy(options.retries),
    dedupe,
    now,
  };
}
