import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from './api-error.js';

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/**
 * Returns a check of the `Authorization` header: `Bearer <apiKey>`, compared in constant time.
 * The check returns the key presented, or throws `UNAUTHORIZED`.
 */
export function createAuthenticator(apiKey: string): (authorization: string | undefined) => string {
  const expected = digest(apiKey);
  return (authorization) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    const presented = match?.[1];
    if (presented === undefined) {
      throw new ApiError('UNAUTHORIZED', 'Missing API key: send "Authorization: Bearer <apiKey>".');
    }
    if (!timingSafeEqual(digest(presented), expected))
      throw new ApiError('UNAUTHORIZED', 'Invalid API key.');
    return presented;
  };
}
