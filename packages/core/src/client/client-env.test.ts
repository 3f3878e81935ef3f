import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChurnRiskClient } from '@churn-risk/core';
import { PRODUCTION_BASE_URL, STAGING_BASE_URL } from '@churn-risk/core/wire';
import { API_KEY, startFakeService, type FakeService } from './fake-service.test-util.js';

// Each test sets exactly the variables it means; whatever the shell running the tests exported
// is hidden, then restored by `unstubAllEnvs`.
beforeEach(() => {
  vi.stubEnv('CHURN_RISK_API_KEY', undefined);
  vi.stubEnv('CHURN_RISK_BASE_URL', undefined);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

function thrown(make: () => unknown): unknown {
  try {
    make();
  } catch (error) {
    return error;
  }
  throw new Error('expected the constructor to throw');
}

describe('new ChurnRiskClient() and the environment', () => {
  describe('with a service', () => {
    let service: FakeService;
    beforeEach(async () => {
      service = await startFakeService(() => ({ status: 204 }));
    });
    afterEach(() => service.close());

    it('takes the key from CHURN_RISK_API_KEY and the base URL from CHURN_RISK_BASE_URL', async () => {
      vi.stubEnv('CHURN_RISK_API_KEY', API_KEY);
      vi.stubEnv('CHURN_RISK_BASE_URL', `${service.url}/`);
      const client = new ChurnRiskClient();
      expect(client.baseUrl).toBe(service.url);
      await client.identify('u1', { plan: 'pro' });
      expect(service.requests).toHaveLength(1);
      expect(service.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    });

    it('an explicit apiKey wins over CHURN_RISK_API_KEY', async () => {
      vi.stubEnv('CHURN_RISK_API_KEY', 'sk_test_from_env');
      const client = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: service.url });
      await client.identify('u1', { plan: 'pro' });
      expect(service.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    });

    it('an apiKey of undefined (an unset variable passed on) falls back to CHURN_RISK_API_KEY', async () => {
      vi.stubEnv('CHURN_RISK_API_KEY', API_KEY);
      const client = new ChurnRiskClient({ apiKey: undefined, baseUrl: service.url });
      await client.identify('u1', { plan: 'pro' });
      expect(service.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    });
  });

  it('an explicit baseUrl or env wins over CHURN_RISK_BASE_URL', () => {
    vi.stubEnv('CHURN_RISK_BASE_URL', 'http://127.0.0.1:4010');
    expect(
      new ChurnRiskClient({ apiKey: API_KEY, baseUrl: 'https://proxy.example/api' }).baseUrl,
    ).toBe('https://proxy.example/api');
    expect(new ChurnRiskClient({ apiKey: API_KEY, env: 'staging' }).baseUrl).toBe(STAGING_BASE_URL);
    expect(new ChurnRiskClient({ apiKey: API_KEY, env: 'production' }).baseUrl).toBe(
      PRODUCTION_BASE_URL,
    );
    expect(new ChurnRiskClient({ apiKey: API_KEY }).baseUrl).toBe('http://127.0.0.1:4010');
  });

  it('without CHURN_RISK_BASE_URL (or with it empty) the base URL is production', () => {
    expect(new ChurnRiskClient({ apiKey: API_KEY }).baseUrl).toBe(PRODUCTION_BASE_URL);
    vi.stubEnv('CHURN_RISK_BASE_URL', '');
    expect(new ChurnRiskClient({ apiKey: API_KEY }).baseUrl).toBe(PRODUCTION_BASE_URL);
  });

  it('a bad CHURN_RISK_BASE_URL is a VALIDATION_ERROR naming the variable', () => {
    vi.stubEnv('CHURN_RISK_BASE_URL', 'api.churn-risk.example');
    expect(thrown(() => new ChurnRiskClient({ apiKey: API_KEY }))).toMatchObject({
      name: 'ServiceError',
      code: 'VALIDATION_ERROR',
      message: expect.stringContaining('CHURN_RISK_BASE_URL'),
    });
  });

  it.each([
    ['no options', () => new ChurnRiskClient()],
    ['{}', () => new ChurnRiskClient({})],
    ['apiKey: undefined', () => new ChurnRiskClient({ apiKey: undefined })],
  ])('without a key (%s) throws a VALIDATION_ERROR naming CHURN_RISK_API_KEY', (_name, make) => {
    expect(thrown(make)).toMatchObject({
      name: 'ServiceError',
      code: 'VALIDATION_ERROR',
      message: expect.stringContaining('CHURN_RISK_API_KEY'),
    });
  });

  it('an empty CHURN_RISK_API_KEY counts as missing', () => {
    vi.stubEnv('CHURN_RISK_API_KEY', '');
    expect(thrown(() => new ChurnRiskClient())).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringContaining('CHURN_RISK_API_KEY'),
    });
  });

  it('an explicit empty apiKey is refused, not replaced by CHURN_RISK_API_KEY', () => {
    vi.stubEnv('CHURN_RISK_API_KEY', API_KEY);
    const error = thrown(() => new ChurnRiskClient({ apiKey: '' }));
    expect(error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: expect.stringContaining('apiKey'),
    });
    expect((error as Error).message).not.toContain(API_KEY);
  });

  it('reads nothing where there is no process (Workers, browsers)', () => {
    vi.stubEnv('CHURN_RISK_API_KEY', API_KEY);
    vi.stubEnv('CHURN_RISK_BASE_URL', 'http://127.0.0.1:4010');
    vi.stubGlobal('process', undefined);
    try {
      expect(thrown(() => new ChurnRiskClient())).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: expect.stringContaining('CHURN_RISK_API_KEY'),
      });
      expect(new ChurnRiskClient({ apiKey: 'k' }).baseUrl).toBe(PRODUCTION_BASE_URL);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('reads nothing where reading process.env throws (Deno without --allow-env)', () => {
    vi.stubGlobal('process', {
      get env(): never {
        throw new Error('Requires env access');
      },
    });
    try {
      expect(new ChurnRiskClient({ apiKey: 'k' }).baseUrl).toBe(PRODUCTION_BASE_URL);
      expect(thrown(() => new ChurnRiskClient())).toMatchObject({
        message: expect.stringContaining('CHURN_RISK_API_KEY'),
      });
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
