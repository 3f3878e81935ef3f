import type { ReceiverResult } from '@churn-risk/core/adapter';
import { STATUS_CODES } from 'node:http';
import type { EventShape } from './event-request.js';
import type { LambdaHttpResult } from './lambda-events.js';

/** Each header as a one-value list, for an ALB target group with multi-value headers. */
function multiValue(headers: Record<string, string>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = [value];
  return out;
}

/** The receiver's answer in the result shape the event's source expects. */
export function lambdaResult(shape: EventShape, result: ReceiverResult): LambdaHttpResult {
  const { status: statusCode, headers, body } = result;
  switch (shape) {
    case 'http':
      return { statusCode, headers, body };
    case 'rest':
      return { statusCode, headers, body, isBase64Encoded: false };
    case 'alb':
    case 'alb-multi': {
      const statusDescription = `${statusCode} ${STATUS_CODES[statusCode] ?? ''}`.trimEnd();
      return shape === 'alb'
        ? { statusCode, statusDescription, headers, body, isBase64Encoded: false }
        : {
            statusCode,
            statusDescription,
            multiValueHeaders: multiValue(headers),
            body,
            isBase64Encoded: false,
          };
    }
  }
}
