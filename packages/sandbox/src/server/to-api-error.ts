import { ApiError } from './api-error.js';

interface FrameworkError {
  statusCode?: unknown;
  message?: unknown;
}

/** Maps any error thrown while answering to the sandbox's API error (status, code, body). */
export function toApiError(error: unknown, maxBodyBytes: number): ApiError {
  if (error instanceof ApiError) return error;
  const { statusCode, message } = (
    typeof error === 'object' && error !== null ? error : {}
  ) as FrameworkError;
  const text = typeof message === 'string' ? message : 'Bad request.';
  switch (statusCode) {
    case 413:
      return new ApiError(
        'PAYLOAD_TOO_LARGE',
        `The request body is larger than ${maxBodyBytes} bytes.`,
      );
    case 415:
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.');
    case 400:
      return new ApiError('VALIDATION_ERROR', text);
    default:
      return new ApiError('SERVER_ERROR', 'Internal error in the sandbox.');
  }
}
