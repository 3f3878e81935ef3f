import type { HeaderValue } from '../signature/parse-headers.js';
import type { HeadersInput } from './types.js';

function isHeaders(headers: HeadersInput): headers is Headers {
  return typeof (headers as { get?: unknown }).get === 'function';
}

/**
 * A header's value, by lower-case `name`, matched case-insensitively. A Web `Headers` already
 * joins repeated values; in a record, every key that matches contributes (so `X-A` and `x-a` are
 * both seen, like a repeated header) and the verifier joins them with `, `.
 */
export function getHeader(headers: HeadersInput, name: string): HeaderValue {
  if (isHeaders(headers)) return headers.get(name);
  let found: string | readonly string[] | undefined;
  let values: string[] | undefined; // only when the header occurs under several keys
  // for-in, not Object.keys: V8 walks a record's own keys from its cached enumeration without an
  // array per lookup (two lookups per delivery). Header records are plain objects, or Node's
  // null-prototype `headers`; an inherited key that matches is skipped.
  for (const key in headers) {
    // The length test spares a lower-casing of nearly every other header.
    if (key.length !== name.length || key.toLowerCase() !== name) continue;
    if (!Object.hasOwn(headers, key)) continue;
    const value = headers[key];
    if (typeof value !== 'string' && !Array.isArray(value)) continue;
    if (found === undefined) {
      found = value as string | readonly string[];
      continue;
    }
    values ??= typeof found === 'string' ? [found] : [...found];
    if (typeof value === 'string') values.push(value);
    else values.push(...(value as readonly string[]));
  }
  return values ?? found;
}
