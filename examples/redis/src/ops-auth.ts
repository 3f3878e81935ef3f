import type { OpsAuthorize } from '@churn-risk/ops';
import { timingSafeEqual } from 'node:crypto';

/** Asks the browser for the user `ops` and its password (HTTP Basic). */
const challenge = (): Response =>
  new Response('The failed alerts page needs a password.', {
    status: 401,
    headers: { 'www-authenticate': 'Basic realm="churn-risk ops", charset="UTF-8"' },
  });

/**
 * The page's `authorize`: HTTP Basic with user `ops` and `password`, compared in constant time;
 * without a password, `'none'` (which `createOpsHandler` refuses when `NODE_ENV` is `production`).
 */
export function opsAuthorize(password: string | undefined): OpsAuthorize | 'none' {
  if (password === undefined || password === '') return 'none';
  const expected = Buffer.from(`Basic ${Buffer.from(`ops:${password}`).toString('base64')}`);
  return (request) => {
    const given = Buffer.from(request.headers.get('authorization') ?? '');
    return (given.length === expected.length && timingSafeEqual(given, expected)) || challenge();
  };
}
