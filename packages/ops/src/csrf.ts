// CSRF tokens: `<expiry in base 36>.<HMAC-SHA256 of the expiry>`, under a key the page's visitors
// never see. A cross-site page cannot read a token (the answers carry no CORS headers), and a form
// cannot send the header the token travels in. Web Crypto only, so that it runs on Workers too.

/** How long a token is taken; the page gets a fresh one with every refresh of the counts. */
export const TOKEN_TTL_MS = 2 * 3_600_000;
/** The request and response header of the token. */
export const CSRF_HEADER = 'x-churn-risk-csrf';

const encoder = new TextEncoder();

function base64url(bytes: ArrayBuffer): string {
  let text = '';
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9_-]{43}$/.test(text)) return undefined;
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** Issues and checks the tokens of one handler. */
export interface CsrfTokens {
  /** A token valid for `TOKEN_TTL_MS` from `now`. */
  issue(now: number): Promise<string>;
  /** True when `token` was issued under this key and has not expired. */
  verify(token: string | null, now: number): Promise<boolean>;
}

/** Tokens under `secret`, or under a random key of this handler when there is none. */
export function createCsrfTokens(secret: string | undefined): CsrfTokens {
  const raw: Uint8Array<ArrayBuffer> =
    secret === undefined ? crypto.getRandomValues(new Uint8Array(32)) : encoder.encode(secret);
  const key = crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
  const message = (expiry: string): Uint8Array<ArrayBuffer> =>
    encoder.encode(`churn-risk-ops-csrf:${expiry}`);
  return {
    async issue(now) {
      const expiry = (now + TOKEN_TTL_MS).toString(36);
      return `${expiry}.${base64url(await crypto.subtle.sign('HMAC', await key, message(expiry)))}`;
    },
    async verify(token, now) {
      const [expiry, mac, extra] = (token ?? '').split('.');
      if (expiry === undefined || mac === undefined || extra !== undefined) return false;
      if (!/^[0-9a-z]{1,12}$/.test(expiry)) return false;
      const expires = parseInt(expiry, 36);
      if (expires <= now || expires > now + TOKEN_TTL_MS + 60_000) return false;
      const signature = fromBase64url(mac);
      if (signature === undefined) return false;
      return crypto.subtle.verify('HMAC', await key, signature, message(expiry));
    },
  };
}
