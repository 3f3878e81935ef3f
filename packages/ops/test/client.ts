import { CSRF_HEADER, type OpsHandler } from '../src/index.js';

// Requests to an operations handler mounted at `/ops` of `http://ops.test`, as the page and a
// script send them.

export const ORIGIN = 'http://ops.test';
export const TOKEN = 'ops-test-token';
export const AUTH = { authorization: `Bearer ${TOKEN}` };

/** The `authorize` of these tests: a bearer token. */
export const authorize = (request: Request): boolean =>
  request.headers.get('authorization') === AUTH.authorization;

/** `GET /ops<path>` with the bearer token (or `headers`). */
export function get(
  ops: OpsHandler,
  path: string,
  headers: Record<string, string> = AUTH,
): Promise<Response> {
  return ops(new Request(`${ORIGIN}/ops${path}`, { headers }));
}

/** A CSRF token, from an authorized `GET`. */
export async function csrfToken(ops: OpsHandler): Promise<string> {
  const response = await get(ops, '/api/counts');
  const token = response.headers.get(CSRF_HEADER);
  if (token === null) throw new Error(`no token (status ${String(response.status)})`);
  return token;
}

/** `POST /ops/api/retry` as the page sends it (same origin, JSON, token), with `headers` on top. */
export async function postRetry(
  ops: OpsHandler,
  body: unknown,
  headers: Record<string, string | undefined> = {},
): Promise<Response> {
  const all: Record<string, string | undefined> = {
    ...AUTH,
    origin: ORIGIN,
    'sec-fetch-site': 'same-origin',
    'content-type': 'application/json',
    [CSRF_HEADER]: await csrfToken(ops),
    ...headers,
  };
  const sent = Object.fromEntries(
    Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return ops(
    new Request(`${ORIGIN}/ops/api/retry`, {
      method: 'POST',
      headers: sent,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
}

/** The JSON body of `response`. */
export async function bodyOf<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}
