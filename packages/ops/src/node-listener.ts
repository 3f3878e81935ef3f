import { isChurnRiskError } from '@churn-risk/core';
import { readNodeBody, sendNodeResponse } from '@churn-risk/core/adapter';
import { OpsError } from './ops-error.js';
import type { OpsHandler, OpsNodeRequest } from './options.js';
import { answerFor } from './responses.js';
import { MAX_BODY_BYTES } from './retry-body.js';

const first = (value: string | readonly string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : value?.[0];

/** The body of a Node `POST`: read from the stream (within the limit), or a parser's object. */
async function nodeBody(req: OpsNodeRequest): Promise<string> {
  if (req.readableEnded) {
    if (typeof req.body === 'object' && req.body !== null) return JSON.stringify(req.body);
    throw new OpsError(
      'BODY_ALREADY_READ',
      500,
      'The request body was read before the operations handler; mount it before any body parser.',
    );
  }
  try {
    return new TextDecoder().decode(await readNodeBody(req, { maxBytes: MAX_BODY_BYTES }));
  } catch (error) {
    if (isChurnRiskError(error, 'DeliveryRejectedError')) {
      throw new OpsError(
        'PAYLOAD_TOO_LARGE',
        413,
        `The body is larger than ${MAX_BODY_BYTES} bytes.`,
      );
    }
    throw new OpsError('BAD_REQUEST', 400, 'The request body could not be read.', { cause: error });
  }
}

/** A Web `Request` of a Node request: its full path (`originalUrl` under Express), headers and body. */
async function toRequest(req: OpsNodeRequest): Promise<Request> {
  const method = (req.method ?? 'GET').toUpperCase();
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    for (const item of typeof value === 'string' ? [value] : value) headers.append(name, item);
  }
  let url: URL;
  try {
    url = new URL(
      req.originalUrl ?? req.url ?? '/',
      `http://${first(req.headers.host) ?? 'localhost'}`,
    );
  } catch {
    throw new OpsError('BAD_REQUEST', 400, 'The request has no valid URL.');
  }
  const body = method === 'POST' ? await nodeBody(req) : undefined;
  return new Request(url, body === undefined ? { method, headers } : { method, headers, body });
}

/** `ops.node`: answers a Node request with the Fetch handler. Never rejects. */
export function createNodeListener(
  handle: (request: Request) => Promise<Response>,
): OpsHandler['node'] {
  return async (req, res) => {
    let response: Response;
    try {
      response = await handle(await toRequest(req));
    } catch (error) {
      response = answerFor(error);
      if (req.method?.toUpperCase() === 'POST') response.headers.set('connection', 'close');
    }
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    sendNodeResponse(res, {
      status: response.status,
      headers,
      body: await response.text(),
      done: Promise.resolve(),
    });
  };
}
