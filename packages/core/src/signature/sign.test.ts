import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signPayload, verifySignature } from '@churn-risk/core';

describe('smoke', () => {
  it('signs like an independent HMAC', () => {
    const { signature, timestamp } = signPayload({
      body: '{"a":1}',
      secret: 's',
      timestamp: 1700000000,
    });
    const expected = createHmac('sha256', 's').update('1700000000.{"a":1}').digest('hex');
    expect(signature).toBe(`sha256=${expected}`);
    expect(() =>
      verifySignature({ body: '{"a":1}', signature, timestamp, secret: 's', now: 1700000000_000 }),
    ).not.toThrow();
  });
});
