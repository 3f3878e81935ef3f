import { payloadTooLarge } from './responses.js';

/**
 * The declared `Content-Length`, when it is a plain decimal number; `undefined` otherwise (the
 * limit is then enforced while reading).
 */
export function declaredLength(
  value: string | readonly string[] | null | undefined,
): number | undefined {
  const text = typeof value === 'string' ? value.trim() : undefined;
  return text !== undefined && /^[0-9]{1,16}$/.test(text) ? Number(text) : undefined;
}

/** Collects chunks up to `maxBytes`; `push` throws `PAYLOAD_TOO_LARGE` as soon as it is passed. */
export class ByteCollector {
  readonly #chunks: Uint8Array[] = [];
  #total = 0;

  constructor(readonly maxBytes: number) {}

  /** Adds a chunk; throws the 413 error when the total passes the limit. */
  push(chunk: Uint8Array): void {
    this.#total += chunk.byteLength;
    if (this.#total > this.maxBytes) throw payloadTooLarge(this.maxBytes);
    this.#chunks.push(chunk);
  }

  /** The collected bytes as one array (no copy when there is a single chunk). */
  bytes(): Uint8Array {
    if (this.#chunks.length === 1) return this.#chunks[0] as Uint8Array;
    const out = new Uint8Array(this.#total);
    let offset = 0;
    for (const chunk of this.#chunks) {
      out.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return out;
  }
}

/**
 * Reads a Web body stream (a `Request`'s `body`, `null` for none) chunk by chunk, never holding
 * more than `maxBytes` (+ one chunk): checks the declared `contentLength` first, then counts while
 * reading and cancels the stream once the limit is passed. Rejects with `WebhookVerificationError`
 * `PAYLOAD_TOO_LARGE`.
 */
export async function readWebBody(
  stream: ReadableStream<Uint8Array> | null,
  contentLength: string | null,
  maxBytes: number,
): Promise<Uint8Array> {
  const declared = declaredLength(contentLength);
  if (declared !== undefined && declared > maxBytes) {
    if (stream !== null) stream.cancel().catch(() => undefined);
    throw payloadTooLarge(maxBytes);
  }
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const collector = new ByteCollector(maxBytes);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      collector.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => undefined);
    throw error;
  }
  return collector.bytes();
}
