import { describe, expect, it } from 'vitest';
import {
  createReceiver,
  DeliveryRejectedError,
  isChurnRiskError,
  WebhookVerificationError,
} from '@churn-risk/core';
import { deliveryRefusal, payloadTooLarge } from '@churn-risk/core/adapter';
import { createTestDelivery } from '@churn-risk/core/testing';

// A WebhookVerificationError is a 401 only; 405, 413 and 400 are DeliveryRejectedError.

describe('DeliveryRejectedError', () => {
  it('carries the status of its code from the one table', () => {
    expect(new DeliveryRejectedError('METHOD_NOT_ALLOWED', 'x')).toMatchObject({ status: 405 });
    expect(new DeliveryRejectedError('INVALID_PAYLOAD', 'x')).toMatchObject({ status: 400 });
    const tooLarge = payloadTooLarge(10);
    expect(tooLarge).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(tooLarge.message).toBe('The body is larger than the limit of 10 bytes.');
    expect(tooLarge.name).toBe('DeliveryRejectedError');
    const cause = new Error('root');
    expect(new DeliveryRejectedError('INVALID_PAYLOAD', 'x', { cause }).cause).toBe(cause);
  });

  it('is told apart from a verification error, also across copies of the package', () => {
    const rejected = new DeliveryRejectedError('INVALID_PAYLOAD', 'x');
    expect(isChurnRiskError(rejected, 'DeliveryRejectedError')).toBe(true);
    expect(isChurnRiskError(rejected, 'WebhookVerificationError')).toBe(false);
    expect(
      isChurnRiskError(
        new WebhookVerificationError('INVALID_SIGNATURE', 'x'),
        'DeliveryRejectedError',
      ),
    ).toBe(false);
    const copy = Object.assign(new Error('x'), {
      name: 'DeliveryRejectedError',
      code: 'PAYLOAD_TOO_LARGE',
      status: 413,
    });
    expect(isChurnRiskError(copy, 'DeliveryRejectedError')).toBe(true);
    expect(deliveryRefusal(copy)).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'x' });
  });

  it('is what onRejected listeners and the answers see for 405, 413 and 400', async () => {
    const receiver = createReceiver({ secret: 'whsec_rejected', maxBodyBytes: 2000 });
    const seen: [number, string][] = [];
    receiver.onRejected(({ status, code }) => void seen.push([status, code]));
    const valid = createTestDelivery({}, { secret: 'whsec_rejected' });
    expect((await receiver.handle({ method: 'GET', headers: {}, body: null })).status).toBe(405);
    const big = await receiver.handle({ ...valid, method: 'POST', body: 'x'.repeat(2001) });
    expect(big.status).toBe(413);
    const invalid = createTestDelivery({ score: 7 }, { secret: 'whsec_rejected' });
    expect((await receiver.handle({ ...invalid, method: 'POST' })).status).toBe(400);
    expect(seen).toEqual([
      [405, 'METHOD_NOT_ALLOWED'],
      [413, 'PAYLOAD_TOO_LARGE'],
      [400, 'INVALID_PAYLOAD'],
    ]);
    await receiver.close();
  });
});
