import { isOpsError, type OpsError } from './ops-error.js';

/** Headers of every answer: nothing cached, nothing framed, nothing sniffed, no referrer. */
const COMMON_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
} as const;

/** The page's policy: its own inline script and style (by nonce), fetches to its own origin only. */
export function pagePolicy(nonce: string): string {
  return (
    `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; ` +
    "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
  );
}

/** The policy of every answer that is not the page: it runs and loads nothing. */
const DATA_POLICY =
  "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** A response with the common headers, the data policy, and `headers` on top. */
export function respond(
  status: number,
  body: string,
  contentType: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(body, {
    status,
    headers: {
      ...COMMON_HEADERS,
      'content-security-policy': DATA_POLICY,
      'content-type': contentType,
      ...headers,
    },
  });
}

/** A JSON answer. */
export function json(status: number, value: unknown, headers?: Record<string, string>): Response {
  return respond(status, JSON.stringify(value), 'application/json; charset=utf-8', headers);
}

/** The answer to a refused or failed request: `{ error: { code, message } }`, nothing else. */
export function errorAnswer(error: OpsError, headers?: Record<string, string>): Response {
  return json(error.status, { error: { code: error.code, message: error.message } }, headers);
}

/** `errorAnswer` for an `OpsError`; anything else is a `500` that says nothing of its cause. */
export function answerFor(error: unknown): Response {
  if (isOpsError(error)) return errorAnswer(error);
  return json(500, {
    error: { code: 'INTERNAL_ERROR', message: 'The operations page failed; see the server log.' },
  });
}

/** 16 random bytes, base64: a nonce for one page. */
export function newNonce(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
}
