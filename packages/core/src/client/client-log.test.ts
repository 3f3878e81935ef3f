import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChurnRiskClient, type ClientOptions, type Logger } from '@churn-risk/core';
import {
  API_KEY,
  recordingSleep,
  startFakeService,
  type FakeService,
} from './fake-service.test-util.js';

let service: FakeService;

beforeEach(async () => {
  service = await startFakeService();
});
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await service.close();
});

interface Line {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

function capture(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void => {
      lines.push({ level, fields, message });
    };
  return {
    lines,
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
  };
}

function makeClient(options: Partial<ClientOptions> = {}): ChurnRiskClient {
  return new ChurnRiskClient(
    { apiKey: API_KEY, baseUrl: service.url, maxRetries: 2, ...options },
    { sleep: recordingSleep().sleep, random: () => 0.5 },
  );
}

const risk = {
  userId: 'u1',
  score: 0.8,
  tier: 'high',
  signals: ['payment_failed'],
  recommendation: 'call them',
};

describe('client logging', () => {
  it('is off by default: nothing reaches the console', async () => {
    const spies = (['debug', 'info', 'warn', 'error'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(() => undefined),
    );
    service.reply({ status: 503 }, { status: 200, body: risk });
    await makeClient().getRiskScore('u1');
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it('logs one debug line per attempt: method, path, status, ms, attempt, request id', async () => {
    const { logger, lines } = capture();
    service.reply(
      { status: 503, headers: { 'x-request-id': 'req_1' } },
      { status: 200, headers: { 'x-request-id': 'req_2' }, body: risk },
    );
    await makeClient({ logLevel: 'debug', logger }).getRiskScore('u1');
    const attempts = lines.filter((line) => line.level === 'debug');
    expect(attempts.map((line) => line.fields)).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/v1/users/u1/risk',
        status: 503,
        ms: expect.any(Number) as number,
        attempt: 0,
        requestId: 'req_1',
      }),
      expect.objectContaining({ status: 200, attempt: 1, requestId: 'req_2' }),
    ]);
    expect(lines.map((line) => line.level)).toEqual(['debug', 'warn', 'debug', 'info']);
  });

  it('filters by level: warn shows retries and failures only', async () => {
    const { logger, lines } = capture();
    service.reply({ status: 503 }, { status: 503 }, { status: 503 });
    await expect(makeClient({ logLevel: 'warn', logger }).getRiskScore('u1')).rejects.toThrow();
    expect(lines.map((line) => line.level)).toEqual(['warn', 'warn', 'error']);
    expect(lines[2]?.fields).toMatchObject({ code: 'SERVER_ERROR', status: 503, attempts: 3 });
  });

  it('takes CHURN_RISK_LOG when the option is absent; the option wins over it', async () => {
    vi.stubEnv('CHURN_RISK_LOG', 'debug');
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => undefined);
    service.reply({ status: 200, body: risk, headers: { 'x-request-id': 'req_9' } });
    await makeClient().getRiskScore('u1');
    expect(debug).toHaveBeenCalledTimes(1);
    expect(debug.mock.calls[0]?.[0]).toMatch(
      /^\[churn-risk\] GET \/v1\/users\/u1\/risk 200 \d+ms attempt=0 requestId=req_9$/,
    );
    service.reply({ status: 200, body: risk });
    await makeClient({ logLevel: 'off' }).getRiskScore('u1');
    expect(debug).toHaveBeenCalledTimes(1);
  });

  it('refuses a bad logLevel option; a bad CHURN_RISK_LOG turns logging off with a warning', () => {
    expect(() => makeClient({ logLevel: 'loud' as 'debug' })).toThrow(/logLevel/);
    vi.stubEnv('CHURN_RISK_LOG', 'loud');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    makeClient();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('CHURN_RISK_LOG'));
  });

  it('never writes the API key, a header or a body, whatever the service answers', async () => {
    const { logger, lines } = capture();
    const echo = (text: string) => ({
      error: { code: 'ECHO', message: `you sent ${text}`, details: [{ path: 'k', message: text }] },
    });
    service.reply(
      { status: 500, body: echo(API_KEY), headers: { 'x-request-id': 'req_a' } },
      { destroy: true },
      { status: 401, body: echo(`Bearer ${API_KEY}`) },
    );
    const client = makeClient({ logLevel: 'debug', logger, maxRetries: 3 });
    await expect(client.track({ userId: 'u1', event: 'secret_body_marker' })).rejects.toThrow();
    service.reply({ status: 200, body: risk });
    await client.getRiskScore('u1');
    expect(lines.length).toBeGreaterThanOrEqual(6);
    const text = lines.map((line) => `${line.message} ${JSON.stringify(line.fields)}`).join('\n');
    expect(text).toContain('/v1/events');
    expect(text).toContain('NETWORK_ERROR');
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain('secret_body_marker');
    expect(text.toLowerCase()).not.toContain('bearer');
    expect(text).not.toContain('you sent');
  });
});
