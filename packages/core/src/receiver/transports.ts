import { rawBodyMissingError } from './raw-body-missing.js';
import { readWebBody } from './request-body.js';
import type { Receiver, ReceiverResult, WaitUntil } from './types.js';

/** What a transport needs of the receiver: the receiver itself. */
export type TransportReceiver = Pick<
  Receiver,
  'handle' | 'refuse' | 'maxBodyBytes' | 'bodyTimeoutMs'
>;

/** The fix `RAW_BODY_MISSING` names for a Web `Request`. */
const FIX =
  'Hand the Request to receiver.fetch before anything reads its body, or give it ' +
  'request.clone() where a middleware must read the body first.';

async function readAndHandle(
  receiver: TransportReceiver,
  request: Request,
  waitUntil: WaitUntil | undefined,
): Promise<ReceiverResult> {
  // Each getter is read once: undici checks the brand of a Request or Headers on every access.
  const { method, headers } = request;
  if (method.toUpperCase() !== 'POST') return receiver.handle({ method, headers, body: null });
  // A middleware read the body (or holds its stream): the signed bytes are gone.
  const stream = request.body;
  if (request.bodyUsed || stream?.locked === true) {
    return receiver.refuse(rawBodyMissingError(FIX));
  }
  let body: Uint8Array;
  try {
    const { maxBodyBytes, bodyTimeoutMs } = receiver;
    body = await readWebBody(stream, headers.get('content-length'), maxBodyBytes, bodyTimeoutMs);
  } catch (error) {
    return receiver.refuse(error);
  }
  return receiver.handle({ method, headers, body, waitUntil });
}

/**
 * `receiver.fetch`: Web `Request` in, `Response` out; the body is read with the receiver's
 * `maxBodyBytes` and `bodyTimeoutMs` enforced.
 */
export function createFetchHandler(receiver: TransportReceiver): Receiver['fetch'] {
  return async function fetchHandler(
    request: Request,
    options?: { waitUntil?: WaitUntil | undefined },
  ): Promise<Response> {
    const result = await readAndHandle(receiver, request, options?.waitUntil);
    return new Response(result.body, { status: result.status, headers: result.headers });
  };
}
