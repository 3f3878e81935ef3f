import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChurnRiskClient, type ClientOptions } from '@churn-risk/core';
import { API_KEY, startFakeService, type FakeService } from './fake-service.test-util.js';

let service: FakeService;
let client: ChurnRiskClient;

beforeAll(async () => {
  service = await startFakeService();
  client = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: service.url });
});
beforeEach(() => {
  service.requests.length = 0;
});
afterAll(() => service.close());

const watch = { threshold: 0.5, webhook: 'https://hooks.example.com/x', cooldown: '24h' } as const;
const loose = (value: unknown): never => value as never;

async function rejectsBeforeSending(call: () => Promise<unknown>, field: string): Promise<void> {
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toMatchObject({ name: 'ServiceError', code: 'VALIDATION_ERROR' });
  expect((error as Error).message).toContain(field);
  expect((error as Error).message).not.toContain(API_KEY);
  expect(service.requests).toHaveLength(0);
}

describe('validation before any request', () => {
  const badUserIds: [string, unknown][] = [
    ['empty', ''],
    ['257 characters', 'x'.repeat(257)],
    ['not a string', 42],
    ['"." (a dot segment: URL parsing would drop it)', '.'],
    ['".." (a dot segment: URL parsing would climb a level)', '..'],
  ];
  it.each(badUserIds)('userId %s', async (_name, userId) => {
    const id = loose(userId);
    await rejectsBeforeSending(() => client.getRiskScore(id), 'userId');
    await rejectsBeforeSending(() => client.identify(id, { plan: 'pro' }), 'userId');
    await rejectsBeforeSending(() => client.watch(id, watch), 'userId');
    await rejectsBeforeSending(() => client.unwatch(id), 'userId');
    await rejectsBeforeSending(() => client.track({ userId: id, event: 'login' }), 'userId');
  });

  it('accepts a userId of exactly 256 characters', async () => {
    await client.unwatch('x'.repeat(256)).catch(() => undefined);
    expect(service.requests).toHaveLength(1);
  });

  it.each([
    ['threshold below 0', { threshold: -0.01 }, 'threshold'],
    ['threshold above 1', { threshold: 1.01 }, 'threshold'],
    ['threshold NaN', { threshold: Number.NaN }, 'threshold'],
    ['limit 0', { limit: 0 }, 'limit'],
    ['limit 201', { limit: 201 }, 'limit'],
    ['limit not whole', { limit: 1.5 }, 'limit'],
    ['offset -1', { offset: -1 }, 'offset'],
  ])('getAtRiskUsers: %s', async (_name, options, field) => {
    await rejectsBeforeSending(() => client.getAtRiskUsers(options), field);
  });

  it.each([
    ['pageSize 0', { pageSize: 0 }, 'pageSize'],
    ['pageSize 201', { pageSize: 201 }, 'pageSize'],
    ['threshold 2', { threshold: 2 }, 'threshold'],
  ])(
    'getAllAtRiskUsers: %s (thrown at the call, before any page)',
    async (_name, options, field) => {
      let iterable: AsyncIterable<unknown> | undefined;
      await rejectsBeforeSending(async () => {
        iterable = client.getAllAtRiskUsers(options);
        await Promise.resolve();
      }, field);
      expect(iterable).toBeUndefined();
    },
  );

  it.each([
    ['threshold above 1', { ...watch, threshold: 1.5 }, 'threshold'],
    ['threshold missing', { webhook: watch.webhook, cooldown: '1d' }, 'threshold'],
    [
      'webhook http:// to a public host',
      { ...watch, webhook: 'http://hooks.example.com/x' },
      'webhook',
    ],
    ['webhook not a URL', { ...watch, webhook: 'not a url' }, 'webhook'],
    ['webhook ftp://', { ...watch, webhook: 'ftp://hooks.example.com/x' }, 'webhook'],
    ['cooldown 0h', { ...watch, cooldown: '0h' }, 'cooldown'],
    ['cooldown 01h', { ...watch, cooldown: '01h' }, 'cooldown'],
    ['cooldown 1.5h', { ...watch, cooldown: '1.5h' }, 'cooldown'],
    ['cooldown 10m', { ...watch, cooldown: '10m' }, 'cooldown'],
    ['cooldown empty', { ...watch, cooldown: '' }, 'cooldown'],
  ])('watch: %s', async (_name, options, field) => {
    await rejectsBeforeSending(() => client.watch('u1', loose(options)), field);
  });

  it('watch: http:// loopback webhook is refused when the service is not loopback', async () => {
    let fetched = 0;
    const remote = new ChurnRiskClient({
      apiKey: API_KEY,
      env: 'staging',
      fetch: () => {
        fetched++;
        return Promise.resolve(new Response(null, { status: 204 }));
      },
    });
    await expect(
      remote.watch('u1', { ...watch, webhook: 'http://127.0.0.1:3000/hook' }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
    });
    expect(fetched).toBe(0);
  });

  it.each([
    ['event empty', { userId: 'u1', event: '' }, 'event'],
    ['event missing', { userId: 'u1' }, 'event'],
    [
      'timestamp not ISO 8601',
      { userId: 'u1', event: 'login', timestamp: 'yesterday' },
      'timestamp',
    ],
    [
      'property an object',
      { userId: 'u1', event: 'login', properties: { nested: { a: 1 } } },
      'properties.nested',
    ],
    [
      'property an array',
      { userId: 'u1', event: 'login', properties: { list: [1] } },
      'properties.list',
    ],
  ])('track: %s', async (_name, item, field) => {
    await rejectsBeforeSending(() => client.track(loose(item)), field);
    await rejectsBeforeSending(
      () => client.trackBulk([{ userId: 'ok', event: 'ok' }, loose(item)]),
      `items[1].${field}`,
    );
  });

  it('trackBulk: an empty list, or a bad item anywhere in a long list, sends nothing', async () => {
    await rejectsBeforeSending(() => client.trackBulk([]), 'items');
    const items = Array.from({ length: 700 }, (_, i) => ({ userId: `u${i}`, event: 'login' }));
    items[650] = { userId: 'u650', event: '' };
    await rejectsBeforeSending(() => client.trackBulk(items), 'items[650].event');
  });

  it.each([
    ['an object', { company: { name: 'acme' } }, 'traits.company'],
    ['an array', { tags: ['a'] }, 'traits.tags'],
    ['mrr a string', { mrr: '99' }, 'traits.mrr'],
    ['not an object', 'pro', 'traits'],
  ])('identify: a trait value %s', async (_name, traits, field) => {
    await rejectsBeforeSending(() => client.identify('u1', loose(traits)), field);
  });

  it('a VALIDATION_ERROR lists the bad fields in details', async () => {
    const error = await client.track(loose({ userId: '', event: '' })).catch((e: unknown) => e);
    expect(error).toMatchObject({ details: [{ path: 'item.userId' }, { path: 'item.event' }] });
  });
});

describe('client options', () => {
  // The key and base URL of the shell running the tests must not fill in a missing option.
  beforeEach(() => {
    vi.stubEnv('CHURN_RISK_API_KEY', undefined);
    vi.stubEnv('CHURN_RISK_BASE_URL', undefined);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it.each([
    ['no apiKey', {}, 'apiKey'],
    ['an empty apiKey', { apiKey: '' }, 'apiKey'],
    ['an unknown env', { apiKey: 'k', env: 'dev' }, 'env'],
    ['a baseUrl that is not a URL', { apiKey: 'k', baseUrl: 'api.example' }, 'baseUrl'],
    ['a non-http baseUrl', { apiKey: 'k', baseUrl: 'ftp://api.example' }, 'baseUrl'],
    ['timeout 0', { apiKey: 'k', timeout: 0 }, 'timeout'],
    ['maxRetries -1', { apiKey: 'k', maxRetries: -1 }, 'maxRetries'],
    ['maxRetries 1.5', { apiKey: 'k', maxRetries: 1.5 }, 'maxRetries'],
  ])('throws VALIDATION_ERROR for %s', (_name, options, field) => {
    expect(() => new ChurnRiskClient(options as ClientOptions)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_ERROR' }),
    );
    expect(() => new ChurnRiskClient(options as ClientOptions)).toThrow(field);
  });
});
