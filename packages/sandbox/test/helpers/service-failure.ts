import { ServiceError } from '@churn-risk/core';
import { expect } from 'vitest';

/** The `ServiceError` a client call rejects with (the test fails when it resolves or rejects otherwise). */
export async function serviceFailure(promise: Promise<unknown>): Promise<ServiceError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ServiceError);
  return error as ServiceError;
}
