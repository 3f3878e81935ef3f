import { basicAuth, type OpsAuthorize } from '@churn-risk/ops';

/**
 * The page's `authorize`: HTTP Basic with user `ops` and `password` (`basicAuth` compares in
 * constant time); without a password, `'none'`, which `createOpsHandler` accepts only while
 * `NODE_ENV` is `development` or `test`.
 */
export function opsAuthorize(password: string | undefined): OpsAuthorize | 'none' {
  if (password === undefined || password === '') return 'none';
  return basicAuth({ username: 'ops', password, realm: 'churn-risk ops' });
}
