import { isChurnRiskError } from '@churn-risk/core';
import { readWebBody } from '@churn-risk/core/adapter';
import { OpsError } from './ops-error.js';

/** The largest body `POST api/retry` reads. */
export const MAX_BODY_BYTES = 4_096;

/** The `413` of a body over `MAX_BODY_BYTES`. */
export const tooLarge = (): OpsError =>
  new OpsError('PAYLOAD_TOO_LARGE', 413, `The body is larger than ${MAX_BODY_BYTES} bytes.`);

/** The `408` of a body not whole within `timeoutMs`. */
export const tooSlow = (timeoutMs: number): OpsError =>
  new OpsError('REQUEST_TIMEOUT', 408, `The body was not complete within ${timeoutMs} ms.`);

/** Reads a request's body as text, within `MAX_BODY_BYTES` and the body deadline. */
export type BodyText = () => Promise<string>;

/**
 * The ops error of a failed body read: `413` past `MAX_BODY_BYTES`, `408` past `timeoutMs`,
 * else `400` (the stream failed or closed early).
 */
export function readError(error: unknown, timeoutMs: number): OpsError {
  if (isChurnRiskError(error, 'DeliveryRejectedError')) {
    return error.code === 'REQUEST_TIMEOUT' ? tooSlow(timeoutMs) : tooLarge();
  }
  return new OpsError('BAD_REQUEST', 400, 'The request body could not be read.', { cause: error });
}

/**
 * The text of a Web `Request`'s body, read chunk by chunk: refused once it passes
 * `MAX_BODY_BYTES` (`413`), or when it is not whole within `timeoutMs` (`408`); the stream is
 * cancelled either way.
 */
export async function readRequestText(request: Request, timeoutMs: number): Promise<string> {
  try {
    const bytes = await readWebBody(
      request.body,
      request.headers.get('content-length'),
      MAX_BODY_BYTES,
      timeoutMs,
    );
    return new TextDecoder().decode(bytes);
  } catch (error) {
    throw readError(error, timeoutMs);
  }
}

/**
 * What `POST api/retry` asks for: `{ "id": "..." }` or `{ "all": true }`, as
 * `application/json` (a form cannot send it). The body is read only once the type is right.
 */
export async function readRetryTarget(
  contentType: string | null,
  text: BodyText,
): Promise<{ id: string } | { all: true }> {
  if (!/^application\/json\s*(;|$)/i.test(contentType ?? '')) {
    throw new OpsError('UNSUPPORTED_MEDIA_TYPE', 415, 'Send the body as application/json.');
  }
  const raw = await text(); // a 413 or a 408 goes out as it is
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new OpsError('BAD_REQUEST', 400, 'The body is not JSON.');
  }
  const { id, all } = (typeof body === 'object' && body !== null ? body : {}) as {
    id?: unknown;
    all?: unknown;
  };
  if (all === true && id === undefined) return { all: true };
  if (typeof id === 'string' && id.length > 0 && id.length <= 512 && all === undefined)
    return { id };
  throw new OpsError('BAD_REQUEST', 400, 'Send { "id": "<failed alert id>" } or { "all": true }.');
}
