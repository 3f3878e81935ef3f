import { requestTimeout } from '@churn-risk/core/adapter';
import type { Context } from 'hono';

/**
 * What Hono keeps in `c.req.bodyCache` once `c.req` read the body: promises at run time (its
 * types name the settled values).
 */
type KeptBodies = {
  [K in 'arrayBuffer' | 'blob' | 'text']?: Promise<Body[K]> | Body[K];
};
interface Body {
  arrayBuffer: ArrayBuffer;
  blob: Blob;
  text: string;
}

/**
 * The body a middleware already read through `c.req`, as Hono keeps it: its bytes
 * (`arrayBuffer()`, `bytes()`, `parseBody()`, `blob()`) or its text (`text()`; current Hono keeps
 * `json()`'s text too). `undefined` when only a parsed form is kept (`formData()`, an older Hono's
 * `json()`).
 */
async function keptBody(c: Context): Promise<Uint8Array | string | undefined> {
  const { arrayBuffer, blob, text } = c.req.bodyCache as KeptBodies;
  if (arrayBuffer !== undefined) return new Uint8Array(await arrayBuffer);
  if (blob !== undefined) return new Uint8Array(await (await blob).arrayBuffer());
  if (text !== undefined) return await text;
  return undefined;
}

/** Whether a middleware read the body through `c.req` (Hono then keeps something). */
function hasKeptBody(cache: object): boolean {
  for (const _ in cache) return true;
  return false;
}

/** Whether something read `request`'s body (or holds its stream). */
export function bodyTaken(request: Request): boolean {
  return request.bodyUsed || request.body?.locked === true;
}

/**
 * The body's length when the HTTP layer frames it by `Content-Length` (no `Transfer-Encoding`):
 * the server then reads no more than that, so a length within the limit bounds the read.
 */
function framedLength(headers: Headers): number | undefined {
  if (headers.has('transfer-encoding')) return undefined;
  const value = headers.get('content-length');
  return value !== null && /^[0-9]{1,15}$/.test(value) ? Number(value) : undefined;
}

/** Left to `receiver.fetch`: the body is read from the stream, counting, or refused unread. */
export const STREAM = Symbol('stream');

/**
 * The raw body of a POST: what Hono kept when a middleware read it through `c.req`; else, when its
 * `Content-Length` is within `maxBytes`, read whole with `c.req.arrayBuffer()` within `timeoutMs` (`@hono/node-server`
 * reads the socket directly there, without a Web stream); else `STREAM`. `undefined` when the
 * body was read and only a parsed form, or nothing, is left.
 */
export async function rawBodyOf(
  c: Context,
  maxBytes: number,
  timeoutMs: number,
): Promise<Uint8Array | string | typeof STREAM | undefined> {
  const { req } = c;
  if (hasKeptBody(req.bodyCache)) return keptBody(c);
  if (req.raw.bodyUsed) return undefined;
  const length = framedLength(req.raw.headers);
  if (length === undefined || length > maxBytes) return STREAM;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A sender that stops short of its `Content-Length` would hold the read (and the connection)
  // for as long as the server lets it: the read is bounded by `timeoutMs`, as the stream's is.
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(requestTimeout(timeoutMs));
    }, timeoutMs);
  });
  try {
    return new Uint8Array(await Promise.race([req.arrayBuffer(), late]));
  } catch (error) {
    if (bodyTaken(req.raw) && !isTimeout(error)) return undefined; // a middleware holds the stream
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

function isTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'REQUEST_TIMEOUT';
}
