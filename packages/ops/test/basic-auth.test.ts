import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { basicAuth, createOpsHandler } from '../src/index.js';
import { ORIGIN } from './client.js';

// `basicAuth`: the right user and password (UTF-8) go through; anything else is a 401 with the
// Basic challenge, and the credentials show in no answer and no log.

const USER = 'on-call';
const PASSWORD = 'pässwörd: with colons';
const basic = (text: string): string =>
  `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(text)))}`;
const queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
const logger = { error: vi.fn() };
const ops = createOpsHandler({
  queue,
  authorize: basicAuth({ username: USER, password: PASSWORD }),
  logger,
});
afterAll(() => queue.close());

const counts = (authorization?: string): Promise<Response> =>
  ops(
    new Request(`${ORIGIN}/ops/api/counts`, {
      headers: authorization === undefined ? {} : { authorization },
    }),
  );

describe('basicAuth', () => {
  it('lets the right user and password through', async () => {
    expect((await counts(basic(`${USER}:${PASSWORD}`))).status).toBe(200);
    expect((await counts(basic(`${USER}:${PASSWORD}`).replace('Basic', 'basic'))).status).toBe(200);
  });

  it.each([
    ['no header', undefined],
    ['a wrong user', basic(`someone:${PASSWORD}`)],
    ['a wrong password', basic(`${USER}:${PASSWORD}x`)],
    ['a password one character short', basic(`${USER}:${PASSWORD.slice(0, -1)}`)],
    ['an empty password', basic(`${USER}:`)],
    ['no colon', basic(`${USER}${PASSWORD}`)],
    ['the password in Latin-1, not UTF-8', `Basic ${btoa(`${USER}:${PASSWORD}`)}`],
    ['a header that is not base64', 'Basic %%%not-base64%%%'],
    ['a scheme with no credentials', 'Basic'],
    ['a Bearer token', `Bearer ${PASSWORD}`],
    ['a Digest header', `Digest username="${USER}"`],
    ['an oversized header', basic(`${USER}:${'x'.repeat(5_000)}`)],
  ])('answers %s with 401 and the Basic challenge', async (_name, authorization) => {
    const response = await counts(authorization);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(
      'Basic realm="churn-risk operations", charset="UTF-8"',
    );
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      error: { code: 'UNAUTHORIZED', message: 'Sign in to see failed alerts.' },
    });
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(USER);
    expect(logger.error).not.toHaveBeenCalled();
  });

  it('names its realm', async () => {
    const named = createOpsHandler({
      queue,
      authorize: basicAuth({ username: USER, password: PASSWORD, realm: 'Acme ops' }),
    });
    const response = await named(new Request(`${ORIGIN}/ops`));
    expect(response.headers.get('www-authenticate')).toBe(
      'Basic realm="Acme ops", charset="UTF-8"',
    );
  });

  it('refuses missing, empty or wrong options with a TypeError', () => {
    const wrong: unknown[] = [
      undefined,
      {},
      { username: '', password: 'p' },
      { username: 'u', password: '' },
      { username: 'u' },
      { password: 'p' },
      { username: 'a:b', password: 'p' },
      { username: 'u', password: 'p', realm: 'say "hi"' },
      { username: 'u', password: 'p', realm: '' },
    ];
    for (const options of wrong) {
      expect(() => basicAuth(options as never), JSON.stringify(options)).toThrow(TypeError);
    }
    expect(() => basicAuth({ username: 'u', password: '' })).toThrow(/password/);
  });
});
