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
  const values: string[] = [];
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== name) continue;
    const value = headers[key];
    if (typeof value === 'string') values.push(value);
    else if (Array.isArray(value)) values.push(...(value as readonly string[]));
  }
  if (values.length === 0) return undefined;
  return values.length === 1 ? values[0] : values;
}
