import { OpsError } from './ops-error.js';
import type { OpsAuthorize } from './options.js';
import { errorAnswer } from './responses.js';

/** Options of `basicAuth`. */
export interface BasicAuthOptions {
  /** The user name the browser must send. Not empty, no `:` (HTTP Basic cannot carry it). */
  username: string;
  /** The password the browser must send. Not empty; read it from a secret, never from code. */
  password: string;
  /** The realm the browser's sign-in prompt names. Default `churn-risk operations`. */
  realm?: string | undefined;
}

/** The longest `Authorization` header looked at; a longer one is refused unread. */
const MAX_HEADER_LENGTH = 4_096;
const encoder = new TextEncoder();

function checkOptions(options: BasicAuthOptions): { credentials: string; realm: string } {
  if (typeof options !== 'object' || (options as unknown) === null) {
    throw new TypeError('basicAuth needs { username, password }.');
  }
  const { username, password, realm = 'churn-risk operations' } = options;
  if (typeof username !== 'string' || username === '' || username.includes(':')) {
    throw new TypeError('basicAuth: username must be a non-empty string without ":".');
  }
  if (typeof password !== 'string' || password === '') {
    throw new TypeError(
      'basicAuth: password must be a non-empty string (read it from a secret, e.g. process.env.OPS_PASSWORD).',
    );
  }
  if (
    typeof realm !== 'string' ||
    realm === '' ||
    !/^[\x20-\x7e]+$/.test(realm) ||
    /["\\]/.test(realm)
  ) {
    throw new TypeError('basicAuth: realm must be printable ASCII without quotes or backslashes.');
  }
  return { credentials: `${username}:${password}`, realm };
}

/** The bytes of a `Basic` header's credentials, or `undefined` for any other header. */
function presented(header: string | null): Uint8Array<ArrayBuffer> | undefined {
  if (header === null || header.length > MAX_HEADER_LENGTH) return undefined;
  const match = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(header);
  if (match === null) return undefined;
  let binary: string;
  try {
    binary = atob(match[1] ?? '');
  } catch {
    return undefined;
  }
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/**
 * An `authorize` for HTTP Basic authentication, the sign-in every browser asks for by itself: a
 * request whose `Authorization: Basic …` holds `username` and `password` (UTF-8) goes through;
 * any other is answered `401 UNAUTHORIZED` with `WWW-Authenticate: Basic realm="…",
 * charset="UTF-8"`, which makes the browser prompt. The credentials are compared in constant time
 * (an HMAC of each side under a random key, checked by Web Crypto, so that it runs on Node and
 * Workers alike) and are never logged. A `TypeError` at creation names a missing or wrong option.
 * Serve the page over HTTPS only: Basic sends the password with every request.
 *
 * @example
 * const ops = createOpsHandler({
 *   queue,
 *   authorize: basicAuth({ username: 'ops', password: process.env.OPS_PASSWORD ?? '' }),
 * });
 */
export function basicAuth(options: BasicAuthOptions): OpsAuthorize {
  const { credentials, realm } = checkOptions(options);
  const key = crypto.subtle.importKey(
    'raw',
    crypto.getRandomValues(new Uint8Array(32)),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign', 'verify'],
  );
  const expected = key.then((k) => crypto.subtle.sign('HMAC', k, encoder.encode(credentials)));
  const challenge = (): Response =>
    errorAnswer(new OpsError('UNAUTHORIZED', 401, 'Sign in to see failed alerts.'), {
      'www-authenticate': `Basic realm="${realm}", charset="UTF-8"`,
    });
  return async (request) => {
    const given = presented(request.headers.get('authorization'));
    if (given === undefined) return challenge();
    // `verify` computes the HMAC of what was sent and compares it with the expected one in
    // constant time: neither the length nor the content of the secret shows in the timing.
    const ok = await crypto.subtle.verify('HMAC', await key, await expected, given);
    return ok || challenge();
  };
}
