import { rawBodyMissingError } from './raw-body-missing.js';
import { startTimer } from '../processing/maybe-promise.js';
import { deliveryRefusal } from '../errors/delivery-refusal.js';
import { payloadTooLarge, requestTimeout } from '../errors/delivery-rejected-error.js';
import { utf8Encoder, type RawBody } from '../signature/bytes.js';
import type { NodeBodyStream, NodeRequest, NodeResponse } from './node-types.js';
import type { Receiver, ReceiverResult, WaitUntil } from './types.js';

// Reading a request body within `maxBodyBytes` and `bodyTimeoutMs` (a Web stream or a Node
// stream), and the one Node request path every Node adapter takes: read the body or refuse,
// `Connection: close` after a refusal mid-body, nothing written when the client went away.

/** How long a body may take to arrive whole, by default: 10 seconds. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

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
 * reading and cancels the stream once the limit is passed. Rejects with `DeliveryRejectedError`
 * `PAYLOAD_TOO_LARGE`; or `REQUEST_TIMEOUT` (and cancels the stream) when the body is not whole
 * within `timeoutMs` (default 10 s).
 */
export async function readWebBody(
  stream: ReadableStream<Uint8Array> | null,
  contentLength: string | null,
  maxBytes: number,
  timeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Promise<Uint8Array> {
  const declared = declaredLength(contentLength);
  if (declared !== undefined && declared > maxBytes) {
    if (stream !== null) stream.cancel().catch(() => undefined);
    throw payloadTooLarge(maxBytes);
  }
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const collector = new ByteCollector(maxBytes);
  let stop = (): void => undefined;
  const late = new Promise<never>((_resolve, reject) => {
    stop = startTimer(() => {
      reject(requestTimeout(timeoutMs));
    }, timeoutMs);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), late]);
      if (done) break;
      collector.push(value);
    }
  } catch (error) {
    reader.cancel().catch(() => undefined);
    throw error;
  } finally {
    stop();
  }
  return collector.bytes();
}

/**
 * Reads a Node request body (an `IncomingMessage` or any `Readable`) into bytes, with the limit
 * enforced while reading: a `Content-Length` above `maxBytes` rejects before anything is read, and
 * a body that passes the limit rejects at the chunk that passes it. Either way it rejects with
 * `DeliveryRejectedError` `PAYLOAD_TOO_LARGE`, removes its listeners and pauses the stream (the
 * rest of the body is not read; answer with `Connection: close`). Rejects with a plain `Error` when
 * the stream fails, closes early, or was already read (for example by a body parser). A body not
 * whole within `timeoutMs` (default 10 s: a sender that stalls, a `Content-Length` larger than
 * what is sent) rejects with `DeliveryRejectedError` `REQUEST_TIMEOUT` and is not read further
 * (answer `408` with `Connection: close`).
 *
 * @example
 * const body = await readNodeBody(req, {
 *   maxBytes: receiver.maxBodyBytes,
 *   timeoutMs: receiver.bodyTimeoutMs,
 * });
 */
export function readNodeBody(
  stream: NodeBodyStream,
  options: { maxBytes: number; timeoutMs?: number | undefined },
): Promise<Uint8Array> {
  const { maxBytes, timeoutMs = DEFAULT_BODY_TIMEOUT_MS } = options;
  return new Promise<Uint8Array>((resolve, reject) => {
    const declared = declaredLength(stream.headers?.['content-length']);
    if (declared !== undefined && declared > maxBytes) {
      stream.pause();
      reject(payloadTooLarge(maxBytes));
      return;
    }
    if (stream.readableEnded) {
      reject(
        new Error(
          'The request body was already read (by a body parser?); the raw bytes are needed.',
        ),
      );
      return;
    }
    const collector = new ByteCollector(maxBytes);
    const stop = startTimer(() => {
      fail(requestTimeout(timeoutMs));
    }, timeoutMs);
    const cleanup = (): void => {
      stop();
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
    };
    const fail = (error: unknown): void => {
      cleanup();
      stream.pause();
      reject(error instanceof Error ? error : new Error(String(error)));
    };
    function onData(chunk: unknown): void {
      try {
        collector.push(
          typeof chunk === 'string' ? utf8Encoder.encode(chunk) : (chunk as Uint8Array),
        );
      } catch (error) {
        fail(error);
      }
    }
    function onEnd(): void {
      cleanup();
      resolve(collector.bytes());
    }
    function onError(error: unknown): void {
      fail(error);
    }
    function onClose(): void {
      fail(new Error('The request closed before its body was complete.'));
    }
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

/**
 * Writes a `ReceiverResult` to a Node `ServerResponse` (status, headers, body). Does nothing when
 * the response has already been sent or its connection is gone.
 */
export function sendNodeResponse(res: NodeResponse, result: ReceiverResult): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  res.statusCode = result.status;
  for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
  res.end(result.body);
}

/** What a Node adapter knows about the body before the request path reads it. */
export interface NodeRequestOptions {
  /** The raw bytes a body parser kept (`express.raw()`, `rawBodySaver`, koa-bodyparser's `rawBody`). */
  kept?: RawBody | undefined;
  /** A body parser read the stream without keeping the bytes: the answer is `500 RAW_BODY_MISSING`. */
  consumed?: boolean;
  /** What `RAW_BODY_MISSING`'s message tells the user to change, in this framework's words. */
  rawBodyFix: string;
  /** The platform's `waitUntil`, when it has one (Vercel). */
  waitUntil?: WaitUntil | undefined;
}

/**
 * The one Node request path (`receiver.node`, Express, Koa, Next Pages): a POST's raw body is the bytes a parser kept, else read from
 * `req` with `maxBodyBytes` and `bodyTimeoutMs` enforced while reading; a body a parser consumed is
 * refused `500 RAW_BODY_MISSING` naming `rawBodyFix`; a refusal while reading (413, 408, a failed
 * stream) is answered
 * with `Connection: close`, since the rest of the body stays unread. Other methods go to the
 * receiver unread (405). Resolves with the answer to write, or `undefined` when the client went
 * away (nothing to write, nothing reported). Never rejects.
 *
 * @example
 * const result = await handleNodeRequest(receiver, req, { kept: req.rawBody, rawBodyFix: FIX });
 * if (result !== undefined) sendNodeResponse(res, result);
 */
export async function handleNodeRequest(
  receiver: Pick<Receiver, 'handle' | 'refuse' | 'maxBodyBytes'> & {
    /** The body's deadline in ms; default 10 s. */
    readonly bodyTimeoutMs?: number | undefined;
  },
  req: NodeRequest,
  options: NodeRequestOptions,
): Promise<ReceiverResult | undefined> {
  const method = req.method ?? '';
  const { waitUntil } = options;
  if (method.toUpperCase() !== 'POST') {
    return receiver.handle({ method, headers: req.headers, body: null, waitUntil });
  }
  let body = options.kept;
  if (body === undefined) {
    if (req.destroyed && !req.readableEnded) return undefined; // the client went away
    // A parser read the stream (into an object) and kept no bytes: do not wait for it. The stream's
    // state decides too, not only the parser's result: body-parser 1.x sets `{}` on bodies it skips.
    if (options.consumed === true || req.readableEnded) {
      return receiver.refuse(rawBodyMissingError(options.rawBodyFix)); // logged, reported
    }
    try {
      body = await readNodeBody(req, {
        maxBytes: receiver.maxBodyBytes,
        timeoutMs: receiver.bodyTimeoutMs,
      });
    } catch (error) {
      if (req.destroyed && deliveryRefusal(error) === undefined) return undefined; // client gone
      const refused = receiver.refuse(error); // logged and reported like any refused delivery
      return { ...refused, headers: { ...refused.headers, connection: 'close' } };
    }
  }
  return receiver.handle({ method, headers: req.headers, body, waitUntil });
}
