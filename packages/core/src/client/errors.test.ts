import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChurnRiskClient, ServiceError, isChurnRiskError } from '@churn-risk/core';
import { API_KEY, startFakeService, type FakeService } from './fake-service.test-util.js';

let service: FakeService;
let client: ChurnRiskClient;

beforeEach(async () => {
  service = await startFakeService();
  client = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: service.url, maxRetries: 0 });
});
afterEach(() => service.close());

async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}

describe('status to code, when the body has no code', () => {
  const rows: [number, string, boolean][] = [
    [400, 'VALIDATION_ERROR', false],
    [401, 'UNAUTHORIZED', false],
    [403, 'FORBIDDEN', false],
    [404, 'NOT_FOUND', false],
    [408, 'TIMEOUT', true],
    [409, 'HTTP_ERROR', false],
    [413, 'PAYLOAD_TOO_LARGE', false],
    [422, 'VALIDATION_ERROR', false],
    [429, 'RATE_LIMITED', true],
    [500, 'SERVER_ERROR', true],
    [501, 'SERVER_ERROR', false],
    [502, 'SERVER_ERROR', true],
    [503, 'SERVER_ERROR', true],
    [504, 'SERVER_ERROR', true],
  ];
  it.each(rows)('%i answers code %s (retryable %s)', async (status, code, retryable) => {
    service.reply({ status, raw: 'oops, not json', headers: { 'x-request-id': `req_${status}` } });
    const error = await failure(client.getRiskScore('u1'));
    expect(error).toMatchObject({
      name: 'ServiceError',
      status,
      code,
      retryable,
      requestId: `req_${status}`,
    });
    expect(error.message).toContain(String(status));
    expect(isChurnRiskError(error, 'ServiceError')).toBe(true);
    expect(service.requests).toHaveLength(1);
  });
});

describe('error bodies', () => {
  it('takes code, message and details from the service error body', async () => {
    const details = [{ path: 'events[0].event', message: 'unknown event' }];
    service.reply({
      status: 422,
      body: { error: { code: 'UNKNOWN_EVENT', message: 'no such event', details } },
    });
    const error = await failure(client.track({ userId: 'u1', event: 'x' }));
    expect(error).toMatchObject({
      status: 422,
      code: 'UNKNOWN_EVENT',
      message: 'no such event',
      details,
    });
    expect(error.requestId).toBeUndefined();
  });

  it('404 of an unknown user is NOT_FOUND', async () => {
    service.reply({ status: 404, body: { error: { code: 'NOT_FOUND', message: 'unknown user' } } });
    await expect(client.getRiskScore('nobody')).rejects.toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
  });

  it('never carries the API key in a message, even when the service echoes it', async () => {
    service.reply({
      status: 401,
      body: { error: { code: 'UNAUTHORIZED', message: `bad key ${API_KEY}` } },
    });
    const error = await failure(client.getRiskScore('u1'));
    expect(error.code).toBe('UNAUTHORIZED');
    expect(error.message).not.toContain(API_KEY);
    expect(error.message).toContain('[redacted]');
  });
});

describe('malformed success responses are SERVER_ERROR with the cause', () => {
  it('a body that is not JSON', async () => {
    service.reply({ status: 200, raw: '<html>', headers: { 'x-request-id': 'req_1' } });
    const error = await failure(client.getRiskScore('u1'));
    expect(error).toMatchObject({
      code: 'SERVER_ERROR',
      status: 200,
      requestId: 'req_1',
      retryable: false,
    });
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('a body that does not match the schema', async () => {
    service.reply({ status: 200, body: { userId: 'u1', score: 7, tier: 'extreme' } });
    const error = await failure(client.getRiskScore('u1'));
    expect(error.code).toBe('SERVER_ERROR');
    expect(error.cause).toMatchObject({ name: 'ZodError' });
    expect(service.requests).toHaveLength(1);
  });

  it('an at-risk page without users', async () => {
    service.reply({ status: 200, body: { total: 1 } });
    await expect(client.getAtRiskUsers()).rejects.toMatchObject({ code: 'SERVER_ERROR' });
  });
});

describe('failures without a response', () => {
  it('a refused connection is NETWORK_ERROR, without the key in the message', async () => {
    const closed = await startFakeService();
    const url = closed.url;
    await closed.close();
    const offline = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: url, maxRetries: 0 });
    const error = await failure(offline.getRiskScore('u1'));
    expect(error).toMatchObject({ code: 'NETWORK_ERROR', retryable: true });
    expect(error.status).toBeUndefined();
    expect(error.cause).toBeDefined();
    expect(error.message).not.toContain(API_KEY);
  });

  it('a destroyed socket is NETWORK_ERROR', async () => {
    service.reply({ destroy: true });
    await expect(client.getRiskScore('u1')).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
  });

  it('an attempt past its time-out is TIMEOUT', async () => {
    const slow = new ChurnRiskClient({
      apiKey: API_KEY,
      baseUrl: service.url,
      maxRetries: 0,
      timeout: 50,
    });
    service.reply({ hang: true });
    await expect(slow.getRiskScore('u1')).rejects.toMatchObject({
      code: 'TIMEOUT',
      retryable: true,
    });
  });

  it('an aborted call is ABORTED with the reason as cause', async () => {
    const controller = new AbortController();
    service.reply(() => {
      controller.abort(new Error('user left'));
      return { hang: true };
    });
    const error = await failure(client.getRiskScore('u1', { signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    expect(error.retryable).toBe(false);
    expect((error.cause as Error).message).toBe('user left');
  });

  it('a signal aborted before the call sends nothing', async () => {
    await expect(client.getRiskScore('u1', { signal: AbortSignal.abort() })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    expect(service.requests).toHaveLength(0);
  });
});
