import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startRedisServer, type RedisServer } from '@churn-risk/redis/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpanJson } from './span-json.js';

// SpanKind and SpanStatusCode of @opentelemetry/api.
const CLIENT = 2;
const CONSUMER = 4;
const ERROR = 2;

interface Point {
  attributes: Record<string, string | number | undefined>;
  value: unknown;
}
interface Recorded {
  traces: { id: string; statuses: number[]; spans: SpanJson[] };
  metrics: {
    deliveries: Point[];
    durations: Point[];
    depth: Point[];
    /** The gauge's values with one alert running and three waiting, then after the drain. */
    depthWhileBusy: [unknown[], unknown[]];
    /** `churn_risk.alert.superseded` after one skipped run of handler `crm`. */
    superseded: Point[];
  };
}
interface RoleOutput {
  status: number | undefined;
  depth?: unknown[];
  spans: SpanJson[];
}

const here = dirname(fileURLToPath(import.meta.url));
let recorded: Recorded;
let redisServer: RedisServer | undefined;

const runTs = (args: string[]): Promise<string> =>
  promisify(execFile)(
    process.execPath,
    ['--conditions=@churn-risk/source', '--import', 'tsx', ...args],
    {
      cwd: here,
      encoding: 'utf8',
      timeout: 120_000,
    },
  ).then(({ stdout }) => stdout.trim().split('\n').at(-1) ?? '{}');

beforeAll(async () => {
  redisServer = await startRedisServer();
  recorded = JSON.parse(await runTs(['otel-scenarios.ts'])) as Recorded;
});
afterAll(async () => {
  await redisServer?.stop();
  redisServer?.cleanup();
});

const named = (spans: SpanJson[], name: string): SpanJson[] =>
  spans.filter((span) => span.name === name);

describe('OpenTelemetry traces', () => {
  it('a delivery gives a receive span, child of the active (HTTP server) span', () => {
    const { id, statuses, spans } = recorded.traces;
    expect(statuses).toEqual([202, 401]);
    const server = named(spans, 'POST /webhooks')[0]!;
    const [receive] = named(spans, 'receive churn_risk_alert');
    expect(receive!.kind).toBe(CLIENT);
    expect(receive!.parentSpanId).toBe(server.spanId);
    expect(receive!.attributes).toMatchObject({
      'http.response.status_code': 202,
      'messaging.message.id': id,
      'messaging.operation.type': 'receive',
      'messaging.destination.name': 'churn_risk_alert',
    });
    expect(receive!.attributes['error.type']).toBeUndefined();
  });

  it('each handler try gives a process span linked to the receive span', () => {
    const { id, spans } = recorded.traces;
    const receive = named(spans, 'receive churn_risk_alert')[0]!;
    const tries = named(spans, 'process churn_risk_alert');
    expect(tries).toHaveLength(3); // handler 1: one try; handler 2: a failed try and a retry
    for (const span of tries) {
      expect(span.kind).toBe(CONSUMER);
      expect(span.parentSpanId).toBeUndefined(); // its own trace, linked to the delivery
      expect(span.links).toEqual([{ traceId: receive.traceId, spanId: receive.spanId }]);
      expect(span.attributes).toMatchObject({
        'messaging.message.id': id,
        'messaging.operation.type': 'process',
      });
    }
    const attempts = tries.map((span) => span.attributes['churn_risk.handler.attempt']);
    expect(attempts.sort()).toEqual([0, 0, 1]);
    // the handler's own span is a child of its try's span
    const retry = tries.find((span) => span.attributes['churn_risk.handler.attempt'] === 1)!;
    expect(named(spans, 'app work')[0]!.parentSpanId).toBe(retry.spanId);
  });

  it("a failing handler records the error on its try's span", () => {
    const tries = named(recorded.traces.spans, 'process churn_risk_alert');
    const failed = tries.filter((span) => span.status === ERROR);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.attributes).toMatchObject({
      'churn_risk.handler.attempt': 0,
      'error.type': 'TypeError',
    });
    expect(failed[0]!.events).toEqual([
      expect.objectContaining({
        name: 'exception',
        attributes: expect.objectContaining({ 'exception.message': 'first try fails' }),
      }),
    ]);
  });

  it('a refused delivery: its receive span carries the status and error.type', () => {
    const receives = named(recorded.traces.spans, 'receive churn_risk_alert');
    const refused = receives.find((span) => span.attributes['http.response.status_code'] === 401)!;
    expect(refused.attributes['error.type']).toBe('INVALID_SIGNATURE');
    expect(refused.status).toBe(ERROR);
    expect(refused.attributes['messaging.message.id']).toBeUndefined();
  });

  it("Redis mode: a worker process's process span links to the web process's receive span; the web process's depth gauge reads Redis", async () => {
    const url = redisServer!.url;
    const prefix = `otel-${String(process.pid)}`;
    // The web process accepts into Redis and exits; then a worker process takes the job.
    const web = JSON.parse(await runTs(['otel-redis-role.ts', 'web', url, prefix])) as RoleOutput;
    const worker = JSON.parse(
      await runTs(['otel-redis-role.ts', 'worker', url, prefix]),
    ) as RoleOutput;
    expect(web.status).toBe(202);
    // The web process's own queue is empty; the gauge reads the alert waiting in Redis.
    expect(web.depth).toEqual([1]);
    const receive = named(web.spans, 'receive churn_risk_alert')[0]!;
    expect(receive.attributes['messaging.message.id']).toMatch(/^user_two_processes:/);
    expect(named(web.spans, 'process churn_risk_alert')).toEqual([]);
    const tries = named(worker.spans, 'process churn_risk_alert');
    expect(tries).toHaveLength(1);
    expect(tries[0]!.links).toEqual([{ traceId: receive.traceId, spanId: receive.spanId }]);
    expect(tries[0]!.attributes['messaging.message.id']).toBe(
      receive.attributes['messaging.message.id'],
    );
  });
});

describe('OpenTelemetry metrics', () => {
  it('counts deliveries by status and code', () => {
    const counted = Object.fromEntries(
      recorded.metrics.deliveries.map((point) => [
        `${String(point.attributes['http.response.status_code'])} ${String(point.attributes['error.type'] ?? '-')}`,
        point.value,
      ]),
    );
    expect(counted).toEqual({
      '202 -': 2,
      '401 INVALID_SIGNATURE': 2,
      '405 METHOD_NOT_ALLOWED': 1,
    });
  });

  it('times each handler try by outcome, and observes the queue depth', () => {
    const byOutcome = Object.fromEntries(
      recorded.metrics.durations.map((point) => [
        point.attributes.outcome,
        (point.value as { count: number }).count,
      ]),
    );
    expect(byOutcome).toEqual({ failure: 1, success: 1 });
    expect(recorded.metrics.depth.map((point) => point.value)).toEqual([0]);
    expect(recorded.metrics.depthWhileBusy).toEqual([[3], [0]]);
  });

  it('counts the handler runs skipped for superseded alerts, by handler id', () => {
    expect(recorded.metrics.superseded).toEqual([
      { attributes: { 'churn_risk.handler.id': 'crm' }, value: 1 },
    ]);
  });
});
