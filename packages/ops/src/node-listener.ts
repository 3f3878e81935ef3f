import { readNodeBody, sendNodeResponse } from '@churn-risk/core/adapter';
import { OpsError } from './ops-error.js';
import type { OpsHandler, OpsNodeRequest } from './options.js';
import { answerFor } from './responses.js';
import { MAX_BODY_BYTES, readError, type BodyText } from './retry-body.js';

/**
 * What the handler takes of a request besides the `Request` that `authorize` sees: its method
 * (a Node request may have one a `Request` cannot hold) and how to read its body, which is read
 * only once `authorize` let the request through.
 */
export interface Incoming {
  method: string;
  text: BodyText;
}

/** The handler as the Node listener calls it. */
export type Serve = (request: Request, incoming: Incoming) => Promise<Response>;

/** Methods a Fetch `Request` refuses to hold; `authorize` sees them as a body-less `HEAD`. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

const first = (value: string | readonly string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : value?.[0];

/** A `Host` header that cannot change the URL's path or user: no `/`, `?`, `#`, `@`, backslash, space. */
const HOST = /^[^/?#@\\\s]+$/;

/**
 * The request's URL: the `Host` header's origin with the request's path and query, taken as a
 * path even when it begins with `//` (which a URL resolved against a base would read as another
 * host). An absolute-form target (`GET http://host/ops`) keeps only its path and query.
 */
export function nodeUrl(req: OpsNodeRequest): URL {
  const target = req.originalUrl ?? req.url ?? '/';
  const host = first(req.headers.host);
  const origin = `http://${host !== undefined && HOST.test(host) ? host : 'localhost'}`;
  try {
    if (target.startsWith('/')) return new URL(`${origin}${target}`);
    const absolute = new URL(target);
    return new URL(`${origin}/${absolute.pathname.replace(/^\/+/, '')}${absolute.search}`);
  } catch {
    throw new OpsError('BAD_REQUEST', 400, 'The request has no valid URL.');
  }
}

/**
 * The body of a Node request, read once asked for (after `authorize`): from the stream, within
 * `MAX_BODY_BYTES` and `timeoutMs`; or the object a body parser left.
 */
function nodeBody(req: OpsNodeRequest, timeoutMs: number): BodyText {
  return async () => {
    if (req.readableEnded) {
      if (typeof req.body === 'object' && req.body !== null) return JSON.stringify(req.body);
      throw new OpsError(
        'BODY_ALREADY_READ',
        500,
        'The request body was read before the operations handler; mount it before any body parser.',
      );
    }
    try {
      return new TextDecoder().decode(
        await readNodeBody(req, { maxBytes: MAX_BODY_BYTES, timeoutMs }),
      );
    } catch (error) {
      throw readError(error, timeoutMs);
    }
  };
}

/** The `Request` `authorize` sees: the Node request's URL and headers, and no body. */
function toRequest(req: OpsNodeRequest, method: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    for (const item of typeof value === 'string' ? [value] : value) headers.append(name, item);
  }
  return new Request(nodeUrl(req), {
    method: FORBIDDEN_METHODS.has(method) ? 'HEAD' : method,
    headers,
  });
}

/**
 * `ops.node`: answers a Node request with the handler. Nothing but the URL and the headers is
 * read before `authorize`; the body only when a retry asks for it. A request whose body was not
 * read to its end is answered with `Connection: close`. Never rejects.
 */
export function createNodeListener(serve: Serve, bodyTimeoutMs: number): OpsHandler['node'] {
  return async (req, res) => {
    const method = (req.method ?? 'GET').toUpperCase();
    let response: Response;
    try {
      response = await serve(toRequest(req, method), {
        method,
        text: nodeBody(req, bodyTimeoutMs),
      });
    } catch (error) {
      response = answerFor(error);
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    // An unread body (refused before or while reading) is not drained: the connection goes.
    if (req.complete === false) headers.connection = 'close';
    sendNodeResponse(res, {
      status: response.status,
      headers,
      body: await response.text(),
      done: Promise.resolve(),
    });
  };
}
