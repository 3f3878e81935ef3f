import * as wire from '@churn-risk/core/wire';
import type { z } from 'zod';
import { validationError } from '../server/api-error.js';

/** Parses `value` with a shared wire schema, or throws a `VALIDATION_ERROR` naming `what`. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(what, result.error);
  return result.data;
}

/** The `:userId` path parameter (already percent-decoded), 1 to 256 characters. */
export function parseUserId(params: { userId?: string }): string {
  return parseInput(wire.userIdSchema, params.userId, 'userId');
}

/** Route parameters of the `/v1/users/:userId/...` routes. */
export interface UserParams {
  userId: string;
}
