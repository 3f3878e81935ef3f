import { describe, expect, it } from 'vitest';
import {
  AlertCutOffError,
  AlertStalledError,
  ChurnRiskError,
  DeliveryRejectedError,
  HandlersFailedError,
  isDeliveryRejectedError,
  isIntegrationError,
  isNonRetryableError,
  isServiceError,
  isWebhookVerificationError,
  IntegrationError,
  NonRetryableError,
  ReceiverUnavailableError,
  ServiceError,
  SyncHandlingFailedError,
  WebhookVerificationError,
} from '@churn-risk/core';

describe('ChurnRiskError', () => {
  it('is the base of the errors, which stay Errors with their own name, code and cause', () => {
    const cause = new Error('root');
    const errors = [
      new WebhookVerificationError('INVALID_SIGNATURE', 'x', { cause }),
      new DeliveryRejectedError('PAYLOAD_TOO_LARGE', 'x', { cause }),
      new ReceiverUnavailableError('OVERLOADED', 'x', { cause }),
      new IntegrationError('INTERNAL_ERROR', 'x', { cause }),
      new NonRetryableError('x', { cause }),
      new ServiceError({ code: 'TIMEOUT', message: 'x', cause }),
      new HandlersFailedError([{ index: 0, id: undefined, error: cause }]),
      new AlertCutOffError(30_000, ['#0'], cause),
    ];
    for (const error of errors) {
      expect(error).toBeInstanceOf(ChurnRiskError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(error.constructor.name);
      expect(error.cause).toBe(cause);
      expect(typeof error.code).toBe('string');
    }
  });

  it('gives the errors that had no code one that says what happened', () => {
    const tried = new HandlersFailedError([{ index: 1, id: 'crm', error: new Error('down') }]);
    expect(tried).toMatchObject({ code: 'TRY_FAILED', handlers: ['crm'] });
    expect(new AlertStalledError(3)).toMatchObject({ code: 'ALERT_STALLED', stalls: 3 });
    expect(new AlertCutOffError(1000, ['#0']).code).toBe('CUT_OFF');
  });

  it('keeps the codes and statuses the answers carry', () => {
    expect(new SyncHandlingFailedError('x')).toMatchObject({
      name: 'SyncHandlingFailedError',
      code: 'HANDLER_FAILED',
      status: 500,
    });
    expect(new WebhookVerificationError('MISSING_SIGNATURE', 'x').status).toBe(401);
    expect(new ReceiverUnavailableError('CLOSED', 'x').status).toBe(503);
    expect(new NonRetryableError('x').code).toBe('NON_RETRYABLE');
    // A ServiceError without a response has no status.
    expect(new ServiceError({ code: 'NETWORK_ERROR', message: 'x' }).status).toBeUndefined();
    expect(new ServiceError({ code: 'NOT_FOUND', message: 'x', status: 404 }).status).toBe(404);
  });

  it('leaves the is… guards as they were, also for a copy of the package', () => {
    expect(isWebhookVerificationError(new WebhookVerificationError('INVALID_SIGNATURE', 'x'))).toBe(
      true,
    );
    expect(isDeliveryRejectedError(new DeliveryRejectedError('INVALID_PAYLOAD', 'x'))).toBe(true);
    expect(isIntegrationError(new IntegrationError('RAW_BODY_MISSING', 'x'))).toBe(true);
    expect(isNonRetryableError(new NonRetryableError('x'))).toBe(true);
    expect(isServiceError(new ServiceError({ code: 'TIMEOUT', message: 'x' }))).toBe(true);
    const copy = Object.assign(new Error('x'), {
      name: 'NonRetryableError',
      code: 'NON_RETRYABLE',
    });
    expect(isNonRetryableError(copy)).toBe(true);
    expect(isWebhookVerificationError(new DeliveryRejectedError('INVALID_PAYLOAD', 'x'))).toBe(
      false,
    );
  });
});
