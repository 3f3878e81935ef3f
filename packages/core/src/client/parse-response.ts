import type { z } from 'zod';
import { requestIdOf, type RawResponse } from './error-from-response.js';
import { ServiceError } from './service-error.js';

/**
 * Parses a 2xx body with its wire schema. A body that is not JSON or not of the schema is a
 * `SERVER_ERROR` (not retried) with the parse failure as `cause`, so a malformed answer fails here,
 * not later in the caller's code.
 */
export function parseResponse<S extends z.ZodType>(
  schema: S,
  response: RawResponse,
  label: string,
): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(response.text) as unknown;
  } catch (error) {
    throw malformed(response, label, 'is not JSON', error);
  }
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  throw malformed(response, label, 'does not match the API schema', result.error);
}

function malformed(
  response: RawResponse,
  label: string,
  what: string,
  cause: unknown,
): ServiceError {
  return new ServiceError({
    code: 'SERVER_ERROR',
    status: response.status,
    message: `The response to ${label} ${what}`,
    requestId: requestIdOf(response.headers),
    cause,
  });
}
