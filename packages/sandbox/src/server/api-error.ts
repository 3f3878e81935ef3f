import { ChurnRiskError } from '@churn-risk/core';
import type { z } from 'zod';

/** The error codes the sandbox answers with, each with its HTTP status. */
export const API_ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  SERVER_ERROR: 500,
} as const;

/** An error code of the sandbox's API. */
export type ApiErrorCode = keyof typeof API_ERROR_STATUS;

/** One entry of `error.details` for a validation failure. */
export interface ValidationDetail {
  /** Where: a dotted path into the body or query (`events.0.userId`), empty for the whole input. */
  path: string;
  message: string;
}

/** An error that becomes the body `{"error":{"code","message","details"?}}` with the code's status. */
export class ApiError extends ChurnRiskError {
  override readonly name = 'ApiError';
  declare readonly status: number;

  constructor(
    override readonly code: ApiErrorCode,
    message: string,
    readonly details?: ValidationDetail[],
  ) {
    super(message);
    this.status = API_ERROR_STATUS[code];
  }

  /** The JSON error body: `{"error":{"code","message","details"?}}`. */
  toBody(): { error: { code: string; message: string; details?: ValidationDetail[] } } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details && { details: this.details }),
      },
    };
  }
}

/** A `VALIDATION_ERROR` listing every zod issue. */
export function validationError(what: string, error: z.ZodError): ApiError {
  const details = error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  return new ApiError('VALIDATION_ERROR', `Invalid ${what}.`, details);
}
