import { CSRF_HEADER } from '@churn-risk/ops';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bundleWorker } from '../support/workerd-bundle.js';

// The operations handler in workerd (miniflare), bundled as a Workers build bundles it: no Node
// built-in (the build fails on one) and no `nodejs_compat`; the CSRF tokens use Web Crypto.

const AUTH = { authorization: 'Bearer edge-token' };
let mf: Miniflare | undefined;

beforeAll(async () => {
  const { code } = await bundleWorker(new URL('./fixtures/ops-worker.ts', import.meta.url));
  mf = new Miniflare({
    modules: true,
    script: code,
    compatibilityDate: '2025-09-01',
    bindings: { OPS_TOKEN: 'edge-token' },
  });
  await mf.ready;
});

afterAll(async () => {
  await mf?.dispose();
});

const send = async (path: string, init: RequestInit = {}): Promise<Response> => {
  if (mf === undefined) throw new Error('miniflare has not started');
  return (await mf.dispatchFetch(
    `http://ops.test/ops${path}`,
    init as never,
  )) as unknown as Response;
};

it('serves the page and the API, and takes a same-origin retry with its token, in workerd', async () => {
  expect((await send('/')).status).toBe(401);
  const page = await send('/', { headers: AUTH });
  expect(page.status).toBe(200);
  expect(page.headers.get('content-security-policy')).toMatch(/script-src 'nonce-/);
  const html = await page.text();
  expect(html).toContain('user_edge');
  expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  const token = page.headers.get(CSRF_HEADER) ?? '';
  const retry = (headers: Record<string, string>): Promise<Response> =>
    send('/api/retry', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ id: 'job-1' }),
    });
  expect((await retry({ origin: 'https://evil.test', [CSRF_HEADER]: token })).status).toBe(403);
  expect((await retry({ origin: 'http://ops.test', [CSRF_HEADER]: 'nope' })).status).toBe(403);
  const done = await retry({ origin: 'http://ops.test', [CSRF_HEADER]: token });
  expect(await done.json()).toEqual({ retried: 1 });
  const counts = await send('/api/counts', { headers: AUTH });
  expect(await counts.json()).toEqual({ counts: { failed: 0 }, health: { reachable: true } });
});
