import { rawBodyMissingError } from './raw-body-missing.js';
import { DEFAULT_BODY_TIMEOUT_MS, readWebBody } from './request-body.js';
import { errorResponse } from './responses.js';
import type { Receiver, ReceiverRequest, ReceiverResult, WaitUntil } from './types.js';

/** The receiver's `handle`, as a transport calls it. */
export type Handle = (request: ReceiverRequest) => Promise<ReceiverResult>;
/** The answer to a body that could not be read (also logged and reported by the receiver). */
export type Refuse = (error: unknown) => ReceiverResult;

function isPost(method: string | undefined): boolean {
  return method?.toUpperCase() === 'POST';
}

/** The fix `RAW_BODY_MISSING` names for a Web `Request`. */
const FIX =
  'Hand the Request to receiver.fetch before anything reads its body, or give it ' +
  'request.clone() where a middleware must read the body first.';

async function readAndHandle(
  handle: Handle,
  maxBytes: number,
  timeoutMs: number,
  request: Request,
  refuse: Refuse,
  waitUntil: WaitUntil | undefined,
): Promise<ReceiverResult> {
  // Each getter is read once: undici checks the brand of a Request or Headers on every access.
  const { method, headers } = request;
  if (!isPost(method)) return handle({ method, headers, body: null });
  // A middleware read the body (or holds its stream): the signed bytes are gone.
  const stream = request.body;
  if (request.bodyUsed || stream?.locked === true) return refuse(rawBodyMissingError(FIX));
  let body: Uint8Array;
  try {
    body = await readWebBody(stream, headers.get('content-length'), maxBytes, timeoutMs);
  } catch (error) {
    return refuse(error);
  }
  return handle({ method, headers, body, waitUntil });
}

/**
 * `receiver.fetch`: Web `Request` in, `Response` out; the body is read with the limit and the
 * deadline enforced.
 */
export function createFetchHandler(
  handle: Handle,
  maxBytes: number,
  refuse: Refuse = errorResponse,
  timeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Receiver['fetch'] {
  return async function fetchHandler(
    request: Request,
    options?: { waitUntil?: WaitUntil | undefined },
  ): Promise<Response> {
    const result = await readAndHandle(
      handle,
      maxBytes,
      timeoutMs,
      request,
      refuse,
      options?.waitUntil,
    );
    return new Response(result.body, { status: result.status, headers: result.headers });
  };
}
