import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChurnRiskClient, type AtRiskUser } from '@churn-risk/core';
import {
  API_KEY,
  startFakeService,
  type FakeService,
  type Handler,
} from './fake-service.test-util.js';

function user(n: number): AtRiskUser {
  return { userId: `u${n}`, score: 0.9, tier: 'high', signals: [], recommendation: 'r' };
}

/** A service holding `users`, answering by offset and limit like the real one. */
function listing(users: AtRiskUser[], cap = Infinity): Handler {
  return (request) => {
    const offset = Number(request.query.get('offset'));
    const limit = Math.min(Number(request.query.get('limit')), cap);
    return {
      status: 200,
      body: { users: users.slice(offset, offset + limit), total: users.length, offset, limit },
    };
  };
}

function page(users: AtRiskUser[], limit: number, offset = 0): { status: number; body: unknown } {
  return { status: 200, body: { users, total: 100, offset, limit } };
}

let service: FakeService;
let client: ChurnRiskClient;

beforeEach(async () => {
  service = await startFakeService();
  client = new ChurnRiskClient({ apiKey: API_KEY, baseUrl: service.url });
});
afterEach(() => service.close());

async function collect(iterable: AsyncIterable<AtRiskUser>): Promise<string[]> {
  const ids: string[] = [];
  for await (const u of iterable) ids.push(u.userId);
  return ids;
}

const offsets = (): (string | null)[] => service.requests.map((r) => r.query.get('offset'));

describe('getAllAtRiskUsers', () => {
  it('walks every page with limit=pageSize and stops on a short page', async () => {
    const users = Array.from({ length: 25 }, (_, i) => user(i));
    const fallback = listing(users);
    service.reply(fallback, fallback, fallback, fallback);
    const ids = await collect(
      client.getAllAtRiskUsers({ pageSize: 10, threshold: 0.7, plan: 'pro' }),
    );
    expect(ids).toEqual(users.map((u) => u.userId));
    expect(offsets()).toEqual(['0', '10', '20']);
    for (const request of service.requests) {
      expect(request.path).toBe('/v1/at-risk');
      expect(request.query.get('limit')).toBe('10');
      expect(request.query.get('threshold')).toBe('0.7');
      expect(request.query.get('plan')).toBe('pro');
    }
  });

  it('uses pageSize 100 by default and stops on an empty page', async () => {
    const users = Array.from({ length: 200 }, (_, i) => user(i));
    const fallback = listing(users);
    service.reply(fallback, fallback, fallback, fallback);
    expect(await collect(client.getAllAtRiskUsers())).toHaveLength(200);
    expect(offsets()).toEqual(['0', '100', '200']);
    expect(service.requests.map((r) => r.query.get('limit'))).toEqual(['100', '100', '100']);
  });

  it('advances by the users actually returned when the service caps the page', async () => {
    const users = Array.from({ length: 7 }, (_, i) => user(i));
    const capped = listing(users, 3);
    service.reply(capped, capped, capped, capped);
    expect(await collect(client.getAllAtRiskUsers({ pageSize: 5 }))).toEqual(
      users.map((u) => u.userId),
    );
    expect(offsets()).toEqual(['0', '3', '6']);
  });

  it('skips a userId it has already yielded (a score moved between pages)', async () => {
    service.reply(
      page([user(1), user(2), user(3)], 3),
      page([user(3), user(4), user(5)], 3, 3),
      page([user(6)], 3, 6),
    );
    expect(await collect(client.getAllAtRiskUsers({ pageSize: 3 }))).toEqual([
      'u1',
      'u2',
      'u3',
      'u4',
      'u5',
      'u6',
    ]);
    expect(offsets()).toEqual(['0', '3', '6']);
  });

  it('stops on a full page of users all seen before (a service ignoring offset)', async () => {
    const same = page([user(1), user(2)], 2);
    service.reply(same, same, same);
    expect(await collect(client.getAllAtRiskUsers({ pageSize: 2 }))).toEqual(['u1', 'u2']);
    expect(service.requests).toHaveLength(2);
  });

  it('checks the abort signal between pages', async () => {
    const users = Array.from({ length: 30 }, (_, i) => user(i));
    const fallback = listing(users);
    service.reply(fallback, fallback, fallback);
    const controller = new AbortController();
    const ids: string[] = [];
    const walk = async (): Promise<void> => {
      for await (const u of client.getAllAtRiskUsers({ pageSize: 10, signal: controller.signal })) {
        ids.push(u.userId);
        if (ids.length === 10) controller.abort();
      }
    };
    await expect(walk()).rejects.toMatchObject({ name: 'ServiceError', code: 'ABORTED' });
    expect(ids).toHaveLength(10);
    expect(service.requests).toHaveLength(1);
  });

  it('fetches lazily: breaking out early sends no further request', async () => {
    const users = Array.from({ length: 30 }, (_, i) => user(i));
    const fallback = listing(users);
    service.reply(fallback, fallback, fallback);
    for await (const u of client.getAllAtRiskUsers({ pageSize: 10 })) {
      if (u.userId === 'u2') break;
    }
    expect(service.requests).toHaveLength(1);
  });

  it('a page error ends the walk with that error', async () => {
    service.reply(page([user(1), user(2)], 2), { status: 403 });
    const ids: string[] = [];
    const walk = async (): Promise<void> => {
      for await (const u of client.getAllAtRiskUsers({ pageSize: 2 })) ids.push(u.userId);
    };
    await expect(walk()).rejects.toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(ids).toEqual(['u1', 'u2']);
  });
});
