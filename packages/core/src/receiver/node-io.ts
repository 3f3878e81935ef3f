import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { declaredLength, ByteCollector } from './body-limit.js';
import { payloadTooLarge } from './responses.js';
import type { ReceiverResult } from './types.js';

const encoder = new TextEncoder();

/** A Node readable request body: an `IncomingMessage`, or any `Readable` with optional headers. */
export type NodeBodyStream = Readable & { headers?: IncomingHttpHeaders };

/**
 * Reads a Node request body (an `IncomingMessage` or any `Readable`) into bytes, with the limit
 * enforced while reading: a `Content-Length` above `maxBytes` rejects before anything is read, and
 * a body that passes the limit rejects at the chunk that passes it. Either way it rejects with
 * `WebhookVerificationError` `PAYLOAD_TOO_LARGE`, removes its listeners and pauses the stream (the
 * rest of the body is not read; answer with `Connection: close`). Rejects with a plain `Error` when
 * the stream fails, closes early, or was already read (for example by a body parser).
 *
 * @example
 * const body = await readNodeBody(req, { maxBytes: receiver.maxBodyBytes });
 */
export function readNodeBody(
  stream: NodeBodyStream,
  options: { maxBytes: number },
): Promise<Uint8Array> {
  const { maxBytes } = options;
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
    const cleanup = (): void => {
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
        collector.push(typeof chunk === 'string' ? encoder.encode(chunk) : (chunk as Uint8Array));
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
export function sendNodeResponse(res: ServerResponse, result: ReceiverResult): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  res.statusCode = result.status;
  for (const [name, value] of Object.entries(result.headers)) res.setHeader(name, value);
  res.end(result.body);
}
