import { rawBodyMissingError } from '../errors/raw-body-missing.js';
import type { NodeRequest, NodeResponse } from './node-types.js';
import { handleNodeRequest, readWebBody, sendNodeResponse } from './request-body.js';
import { errorResponse } from './responses.js';
import type { Receiver, ReceiverRequest, ReceiverResult, WaitUntil } from './types.js';

type Handle = (request: ReceiverRequest) => Promise<ReceiverResult>;
/** The answer to a body that could not be read (also logged and reported by the receiver). */
type Refuse = (error: unknown) => ReceiverResult;

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
  request: Request,
  refuse: Refuse,
  waitUntil: WaitUntil | undefined,
): Promise<ReceiverResult> {
  // Each getter is read once: undici checks the brand of a Request or Headers on every access.
  const { method, headers } = request;
  if (!isPost(method)) return handle({ method, headers, body: null });
  // A middleware read the body (or holds its stream): the signed bytes are gone (SPEC 12).
  const stream = request.body;
  if (request.bodyUsed || stream?.locked === true) return refuse(rawBodyMissingError(FIX));
  let body: Uint8Array;
  try {
    body = await readWebBody(stream, headers.get('content-length'), maxBytes);
  } catch (error) {
    return refuse(error);
  }
  return handle({ method, headers, body, waitUntil });
}

/** `receiver.fetch`: Web `Request` in, `Response` out; the body is read with the limit enforced. */
export function createFetchHandler(
  handle: Handle,
  maxBytes: number,
  refuse: Refuse = errorResponse,
): Receiver['fetch'] {
  return async function fetchHandler(
    request: Request,
    options?: { waitUntil?: WaitUntil | undefined },
  ): Promise<Response> {
    const result = await readAndHandle(handle, maxBytes, request, refuse, options?.waitUntil);
    return new Response(result.body, { status: result.status, headers: result.headers });
  };
}

/** The fix `RAW_BODY_MISSING` names for a Node request. */
const NODE_FIX = 'Hand the request to receiver.node before anything reads its body.';

/**
 * `receiver.node`: a Node request listener on the one Node request path (`handleNodeRequest`). It
 * answers, and resolves once the answer is written (processing may go on; see `drain`). It never
 * rejects.
 */
export function createNodeHandler(
  handle: Handle,
  maxBytes: number,
  refuse: Refuse = errorResponse,
): Receiver['node'] {
  const receiver = { handle, reject: refuse, maxBodyBytes: maxBytes };
  const options = { rawBodyFix: NODE_FIX };
  return async function nodeHandler(req: NodeRequest, res: NodeResponse): Promise<void> {
    const result = await handleNodeRequest(receiver, req, options);
    if (result !== undefined) sendNodeResponse(res, result);
  };
}
