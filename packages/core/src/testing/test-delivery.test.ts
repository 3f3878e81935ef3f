import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver, churnRiskAlertSchema, type ChurnRiskAlert } from '@churn-risk/core';
import { createTestAlert, createTestDelivery } from '@churn-risk/core/testing';
import { describe, expect, it } from 'vitest';

const SECRET = 'whsec_testing_helpers';

describe('@churn-risk/core/testing', () => {
  it('creates a realistic, valid alert with overrides', () => {
    const alert = createTestAlert({ userId: 'user_9', tier: 'medium', score: 0.5 });
    expect(churnRiskAlertSchema.parse(alert)).toEqual(alert);
    expect(alert).toMatchObject({
      event: 'churn_risk_alert',
      userId: 'user_9',
      tier: 'medium',
      score: 0.5,
    });
  });

  it('round-trips through receiver.handle with the default options and the real clock', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const seen: ChurnRiskAlert[] = [];
    receiver.on('churn_risk_alert', (alert) => {
      seen.push(alert);
    });
    const delivery = createTestDelivery({ userId: 'user_round_trip' }, { secret: SECRET });
    expect(delivery.headers['content-type']).toBe('application/json');
    const result = await receiver.handle({ method: 'POST', ...delivery });
    expect(result.status).toBe(202);
    await result.done;
    expect(seen).toEqual([delivery.alert]);
    expect(JSON.parse(delivery.body)).toEqual(delivery.alert);
  });

  it('round-trips through receiver.fetch and receiver.node', async () => {
    const receiver = createReceiver({ secret: SECRET });
    const seen: string[] = [];
    receiver.on('churn_risk_alert', (alert) => {
      seen.push(alert.userId);
    });
    const viaFetch = createTestDelivery({ userId: 'via_fetch' }, { secret: SECRET });
    const response = await receiver.fetch(
      new Request('http://localhost/hooks', {
        method: 'POST',
        headers: viaFetch.headers,
        body: viaFetch.body,
      }),
    );
    expect(response.status).toBe(202);

    const server = createServer((req, res) => void receiver.node(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const viaNode = createTestDelivery({ userId: 'via_node' }, { secret: SECRET });
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
      const answer = await fetch(url, {
        method: 'POST',
        headers: viaNode.headers,
        body: viaNode.body,
      });
      expect(answer.status).toBe(202);
      expect(await answer.json()).toEqual({ received: true });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await receiver.drain();
    expect(seen.sort()).toEqual(['via_fetch', 'via_node']);
  });

  it('follows the receiver options: header names, signed content, timestamp and rotation', async () => {
    const options = {
      signatureHeader: 'X-Acme-Signature',
      timestampHeader: 'X-Acme-Timestamp',
      signedContent: 'body' as const,
    };
    const receiver = createReceiver({
      secret: ['whsec_new', SECRET],
      now: () => 1_700_000_000_000,
      ...options,
    });
    const delivery = createTestDelivery(undefined, {
      secret: SECRET,
      timestamp: new Date(1_700_000_000_000),
      ...options,
    });
    expect(Object.keys(delivery.headers).sort()).toEqual([
      'content-type',
      'x-acme-signature',
      'x-acme-timestamp',
    ]);
    expect(delivery.headers['x-acme-timestamp']).toBe('1700000000');
    expect((await receiver.handle({ method: 'POST', ...delivery })).status).toBe(202);
    // The same delivery signed for the default content is refused by this receiver.
    const other = createTestDelivery(
      { userId: 'other' },
      {
        secret: SECRET,
        timestamp: 1_700_000_000,
        signatureHeader: options.signatureHeader,
        timestampHeader: options.timestampHeader,
      },
    );
    expect((await receiver.handle({ method: 'POST', ...other })).status).toBe(401);
  });

  it('signs an old timestamp that the receiver then refuses', async () => {
    const receiver = createReceiver({ secret: SECRET, now: () => 1_700_000_000_000 });
    const stale = createTestDelivery({}, { secret: SECRET, timestamp: 1_700_000_000 - 301 });
    const result = await receiver.handle({ method: 'POST', ...stale });
    expect(JSON.parse(result.body).error.code).toBe('TIMESTAMP_OUT_OF_TOLERANCE');
  });
});
