import { createDurableQueue, createMemoryStore, type DurableQueue } from '@churn-risk/core/store';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CSRF_HEADER, createOpsHandler, type OpsHandler } from '../src/index.js';
import { AUTH, ORIGIN, authorize, bodyOf, csrfToken, get, postRetry } from './client.js';
import { failingReceiver, makeAlert, until, type FailingReceiver } from './fixture.js';

// Secure by default: creation refuses a missing authorize (and 'none' outside development and
// test), every answer carries the strict headers, and a retry needs the same origin, JSON and a CSRF token.

let open: FailingReceiver | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  await open?.receiver.close({ timeoutMs: 5_000 });
  open = undefined;
});

/** A handler over an in-memory store holding one failed alert. */
async function withOneFailed(): Promise<{ ops: OpsHandler; queue: DurableQueue }> {
  const queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
  open = failingReceiver(queue);
  await open.deliver(makeAlert({ recommendation: `<img src=x onerror="alert(1)">'&"` }));
  await until(async () => (await queue.failed()).length === 1);
  return { ops: createOpsHandler({ queue, authorize }), queue };
}

describe('createOpsHandler options', () => {
  const queue = createDurableQueue(createMemoryStore());

  it('refuses a missing authorize, an unknown option and a bad queue with a TypeError', () => {
    expect(() => createOpsHandler({ queue } as never)).toThrow(TypeError);
    expect(() => createOpsHandler({ queue } as never)).toThrow(/needs authorize/);
    expect(() => createOpsHandler({ queue, authorize, basepath: '/x' } as never)).toThrow(
      /no option basepath/,
    );
    expect(() => createOpsHandler({ queue: {} as never, authorize })).toThrow(
      /failed\(\), retry\(\)/,
    );
    expect(() => createOpsHandler({ queue, authorize, csrfSecret: 'short' })).toThrow(
      /32 characters/,
    );
  });

  it("takes authorize: 'none' only while NODE_ENV is exactly development or test", async () => {
    for (const env of ['production', 'Production', 'prod', 'staging', '', 'Development']) {
      vi.stubEnv('NODE_ENV', env);
      expect(() => createOpsHandler({ queue, authorize: 'none' }), env).toThrow(
        /accepted only while NODE_ENV is exactly development or test.*NODE_ENV=development/,
      );
    }
    vi.stubEnv('NODE_ENV', undefined);
    expect(() => createOpsHandler({ queue, authorize: 'none' })).toThrow(/it is not set/);
    for (const env of ['development', 'test']) {
      vi.stubEnv('NODE_ENV', env);
      const ops = createOpsHandler({ queue, authorize: 'none' });
      expect((await ops(new Request(`${ORIGIN}/ops/api/counts`))).status).toBe(200);
    }
  });
});

describe('the operations handler, secure by default', () => {
  it('sends a strict CSP with a fresh nonce, and escapes every alert field', async () => {
    const { ops } = await withOneFailed();
    const [first, second] = [await get(ops, '/'), await get(ops, '/')];
    const csp = first.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/script-src 'nonce-[A-Za-z0-9+/=]{24}'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toBe(second.headers.get('content-security-policy'));
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('referrer-policy')).toBe('no-referrer');
    const page = await first.text();
    // In the alert's JSON, where JSON.stringify put a backslash before each quote.
    expect(page).toContain('&lt;img src=x onerror=\\&quot;alert(1)\\&quot;&gt;&#39;&amp;\\&quot;');
    expect(page).not.toContain('<img');
    // Every script and style element carries the nonce of this answer.
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1] ?? 'none';
    expect(page.match(/<script[^>]*>/g)).toEqual([`<script nonce="${nonce}">`]);
    expect(page.match(/<style[^>]*>/g)).toEqual([`<style nonce="${nonce}">`]);
  });

  it("escapes the user in a Retry button's name, an attribute the page builds from alert fields", async () => {
    const queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
    open = failingReceiver(queue);
    const userId = `u"><img src=x onerror="alert(2)">'&`;
    await open.deliver(makeAlert({ userId }));
    await until(async () => (await queue.failed()).length === 1);
    const page = await (await get(createOpsHandler({ queue, authorize }), '/')).text();
    const escaped = 'u&quot;&gt;&lt;img src=x onerror=&quot;alert(2)&quot;&gt;&#39;&amp;';
    expect(page).toContain(`aria-label="Retry alert for user ${escaped} (alert id `);
    expect(page).not.toContain('<img');
  });

  it('refuses a cross-site or tokenless retry with 403, a form body with 415, and retries nothing', async () => {
    const { ops, queue } = await withOneFailed();
    const [failed] = await queue.failed();
    const id = failed?.id ?? '';
    const cases: [Record<string, string | undefined>, number, string][] = [
      [{ origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }, 403, 'CROSS_SITE'],
      [{ origin: 'https://evil.example', 'sec-fetch-site': undefined }, 403, 'CROSS_SITE'],
      [{ origin: 'null', 'sec-fetch-site': undefined }, 403, 'CROSS_SITE'],
      [{ 'sec-fetch-site': 'same-site' }, 403, 'CROSS_SITE'],
      [{ [CSRF_HEADER]: undefined }, 403, 'CSRF_TOKEN_INVALID'],
      [
        { [CSRF_HEADER]: 'zzzzzzzz.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
        403,
        'CSRF_TOKEN_INVALID',
      ],
      [{ 'content-type': 'application/x-www-form-urlencoded' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ];
    for (const [headers, status, code] of cases) {
      const response = await postRetry(ops, { id }, headers);
      expect({
        status: response.status,
        code: (await bodyOf<{ error: { code: string } }>(response)).error.code,
      }).toEqual({ status, code });
    }
    const tokenOfOther = await csrfToken(createOpsHandler({ queue, authorize }));
    expect((await postRetry(ops, { id }, { [CSRF_HEADER]: tokenOfOther })).status).toBe(403);
    expect(await queue.failed()).toHaveLength(1);
    // A script (no Origin, no Sec-Fetch-Site) with the token retries.
    const script = await postRetry(ops, { id }, { origin: undefined, 'sec-fetch-site': undefined });
    expect(script.status).toBe(200);
  });

  it('takes tokens across instances that share a csrfSecret, and refuses a body over 4 KB', async () => {
    const { queue } = await withOneFailed();
    const csrfSecret = 'a-secret-of-at-least-thirty-two-characters';
    const [one, two] = [
      createOpsHandler({ queue, authorize, csrfSecret }),
      createOpsHandler({ queue, authorize, csrfSecret }),
    ];
    const [failed] = await queue.failed();
    const big = await postRetry(one, { id: failed?.id, pad: 'x'.repeat(5_000) });
    expect(big.status).toBe(413);
    const response = await postRetry(
      two,
      { id: failed?.id },
      { [CSRF_HEADER]: await csrfToken(one) },
    );
    expect(await bodyOf(response)).toEqual({ retried: 1 });
  });

  it('sends what authorize returns as it is, and answers 500 without details when it throws', async () => {
    const queue = createDurableQueue(createMemoryStore());
    const challenge = new Response('login', {
      status: 401,
      headers: { 'www-authenticate': 'Basic realm="ops"' },
    });
    const ops = createOpsHandler({ queue, authorize: () => challenge.clone() });
    const answer = await get(ops, '/');
    expect([answer.status, answer.headers.get('www-authenticate')]).toEqual([
      401,
      'Basic realm="ops"',
    ]);
    const errors: unknown[] = [];
    const throwing = createOpsHandler({
      queue,
      authorize: () => Promise.reject(new Error('session store password=hunter2 down')),
      logger: { error: (fields) => errors.push(fields) },
    });
    const failed = await get(throwing, '/api/failed');
    expect(failed.status).toBe(500);
    expect(await failed.text()).not.toContain('hunter2');
    expect(errors).toHaveLength(1);
    expect(
      (await get(createOpsHandler({ queue, authorize: () => 'yes' as never }), '/', AUTH)).status,
    ).toBe(401);
  });

  it('routes under any mount point, and refuses other methods and unknown API paths', async () => {
    const { ops } = await withOneFailed();
    for (const url of ['http://x.test/a/b/ops', 'http://x.test/a/b/ops/', 'http://x.test/']) {
      const page = await ops(new Request(url, { headers: AUTH }));
      expect([page.status, page.headers.get('content-type')]).toEqual([
        200,
        'text/html; charset=utf-8',
      ]);
    }
    const list = await ops(new Request('http://x.test/deep/mount/api/failed', { headers: AUTH }));
    expect((await bodyOf<{ alerts: unknown[] }>(list)).alerts).toHaveLength(1);
    expect((await get(ops, '/api/nope')).status).toBe(404);
    expect((await get(ops, '/api/failed?limit=0')).status).toBe(400);
    const put = await ops(
      new Request(`${ORIGIN}/ops/api/failed`, { method: 'PUT', headers: AUTH }),
    );
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET']);
    expect((await get(ops, '/api/retry')).status).toBe(405);
  });
});
