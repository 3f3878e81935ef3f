import { describe, expect, it } from 'vitest';
import {
  AlertCutOffError,
  AlertStalledError,
  ChurnRiskError,
  DeliveryRejectedError,
  HandlersFailedError,
  isChurnRiskError,
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

  it('isChurnRiskError(error, name) tells each class apart, also for a copy of the package', () => {
    expect(
      isChurnRiskError(
        new WebhookVerificationError('INVALID_SIGNATURE', 'x'),
        'WebhookVerificationError',
      ),
    ).toBe(true);
    expect(
      isChurnRiskError(new DeliveryRejectedError('INVALID_PAYLOAD', 'x'), 'DeliveryRejectedError'),
    ).toBe(true);
    expect(
      isChurnRiskError(new IntegrationError('RAW_BODY_MISSING', 'x'), 'IntegrationError'),
    ).toBe(true);
    expect(isChurnRiskError(new NonRetryableError('x'), 'NonRetryableError')).toBe(true);
    expect(
      isChurnRiskError(new ServiceError({ code: 'TIMEOUT', message: 'x' }), 'ServiceError'),
    ).toBe(true);
    const copy = Object.assign(new Error('x'), {
      name: 'NonRetryableError',
      code: 'NON_RETRYABLE',
    });
    expect(isChurnRiskError(copy, 'NonRetryableError')).toBe(true);
    expect(
      isChurnRiskError(
        new DeliveryRejectedError('INVALID_PAYLOAD', 'x'),
        'WebhookVerificationError',
      ),
    ).toBe(false);
  });

  it('isChurnRiskError(error) is true for any churn-risk error, a subclass and a copy of a known class', () => {
    // A subclass of the user's own, with a name of its own: recognised by instanceof.
    class CrmDown extends NonRetryableError {
      constructor(message: string) {
        super(message);
        Object.defineProperty(this, 'name', { value: 'CrmDown' });
      }
    }
    expect(new CrmDown('down').name).toBe('CrmDown');
    expect(isChurnRiskError(new CrmDown('down'))).toBe(true);
    expect(isChurnRiskError(new CrmDown('down'), 'NonRetryableError')).toBe(true);
    expect(isChurnRiskError(new AlertStalledError(4))).toBe(true);
    expect(isChurnRiskError(new ReceiverUnavailableError('CLOSED', 'x'))).toBe(true);
    const copy = Object.assign(new Error('x'), { name: 'ServiceError', code: 'TIMEOUT' });
    expect(isChurnRiskError(copy)).toBe(true);
    expect(isChurnRiskError(copy, 'ServiceError')).toBe(true);
    // Not one: a plain error, an error of another name, a look-alike without a string code.
    expect(isChurnRiskError(new Error('x'))).toBe(false);
    expect(isChurnRiskError(Object.assign(new Error('x'), { name: 'TypeError', code: 'X' }))).toBe(
      false,
    );
    expect(isChurnRiskError(Object.assign(new Error('x'), { name: 'ServiceError' }))).toBe(false);
    expect(isChurnRiskError({ name: 'ServiceError', code: 'TIMEOUT' })).toBe(false);
    expect(isChurnRiskError(new CrmDown('down'), 'ServiceError')).toBe(false);
  });
});
