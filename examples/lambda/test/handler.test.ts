import type { Receiver, ReceiverStats } from '@churn-risk/core';
import { createSandbox, type Sandbox } from '@churn-risk/sandbox';
import {
  afterAll,
  afterEach,
  beforeAll,
  describe,
  expect,
  it,
  vi,
  type MockInstance,
} from 'vitest';
import { driveAlert } from '../../../test/e2e/drive-alert.js';
import { startFunctionUrl, type Base64Rule, type FunctionUrl } from './function-url-emulator.js';

// End to end: the sandbox service signs an alert and POSTs it to a local stand-in for a Lambda
// function URL, which invokes src/handler.ts with the event AWS would send. The handler must have
// run (and logged) before the invocation returned, since Lambda freezes the environment then.

let sandbox: Sandbox;
let receiver: Receiver;
let handler: typeof import('../src/handler.js').handler;
let functionUrl: FunctionUrl | undefined;
let log: MockInstance<typeof console.log>;
const savedSecret = process.env.CHURN_RISK_WEBHOOK_SECRET;

beforeAll(async () => {
  sandbox = await createSandbox();
  process.env.CHURN_RISK_WEBHOOK_SECRET = sandbox.webhookSecret; // read once, at "cold start"
  ({ handler, receiver } = await import('../src/handler.js'));
});

afterEach(async () => {
  await functionUrl?.close();
  functionUrl = undefined;
  log.mockRestore();
});

afterAll(async () => {
  await receiver.close({ timeoutMs: 10_000 });
  await sandbox.close();
  if (savedSecret === undefined) delete process.env.CHURN_RISK_WEBHOOK_SECRET;
  else process.env.CHURN_RISK_WEBHOOK_SECRET = savedSecret;
});

/** The alerts src/log-alert.ts logged, in order, with what had happened before each. */
function spyOnLog(events: string[]): MockInstance<typeof console.log> {
  return vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
    const entry = JSON.parse(String(line)) as { message: string; userId: string };
    events.push(`${entry.message} ${entry.userId}`);
  });
}

describe.each<[string, Base64Rule]>([
  ['a function URL (JSON arrives as text)', 'binary'],
  ['API Gateway with binary media types (every body base64)', 'always'],
])('sandbox → %s → src/handler.ts', (_label, base64) => {
  it('delivers a signed alert that the handler has logged before the invocation returns', async () => {
    const events: string[] = [];
    log = spyOnLog(events);
    const frozen: ReceiverStats[] = [];
    functionUrl = await startFunctionUrl(handler, {
      base64,
      onSettled: () => {
        events.push('invocation settled');
        frozen.push(receiver.stats);
      },
    });
    const userId = `lambda_${base64}`;

    const record = await driveAlert(sandbox, `${functionUrl.url}/`, userId);
    expect(record.attempts).toHaveLength(1);
    expect(record.attempts[0]).toMatchObject({ status: 202 });

    // The handler ran inside the invocation, and nothing was left to do when it returned.
    expect(events).toEqual([`churn_risk_alert ${userId}`, 'invocation settled']);
    expect(frozen[0]).toMatchObject({ queued: 0, running: 0 });
    const [invocation] = functionUrl.invocations;
    expect(invocation?.event.isBase64Encoded).toBe(base64 === 'always');
    expect(invocation?.event.headers['x-service-signature']).toMatch(/^sha256=/);
    expect(invocation?.result).toMatchObject({ statusCode: 202 });
  });
});

describe('sandbox → function URL, a redelivery', () => {
  it('answers the second delivery of an alert 202 duplicate without logging it again', async () => {
    const events: string[] = [];
    log = spyOnLog(events);
    functionUrl = await startFunctionUrl(handler);
    const userId = 'lambda_redelivered';
    const record = await driveAlert(sandbox, `${functionUrl.url}/`, userId);
    expect(sandbox.deliveries.replay(record.id)).toBeDefined();
    await sandbox.deliveries.idle();
    const results = functionUrl.invocations.map((invocation) => invocation.result);
    expect(results).toHaveLength(2);
    expect(results[1]).toMatchObject({
      statusCode: 202,
      body: '{"received":true,"duplicate":true}',
    });
    expect(events).toEqual([`churn_risk_alert ${userId}`]);
  });
});
