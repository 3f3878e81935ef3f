import { payloadTooLarge, type HeadersInput, type RawBody } from '@churn-risk/core/adapter';
import type {
  AlbEvent,
  HttpApiEvent,
  LambdaEventHeaders,
  LambdaEventMultiValueHeaders,
  LambdaHttpEvent,
} from './lambda-events.js';

/** Which answer shape an event asks for. */
export type EventShape = 'rest' | 'http' | 'alb' | 'alb-multi';

/** What the receiver needs from an event. */
export interface EventRequest {
  shape: EventShape;
  method: string;
  headers: HeadersInput;
}

/** A non-null object. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isHttpApiEvent(event: LambdaHttpEvent): event is HttpApiEvent {
  const context: unknown = (event as Partial<HttpApiEvent>).requestContext;
  return isObject(context) && isObject(context.http) && typeof context.http.method === 'string';
}

function isAlbEvent(event: LambdaHttpEvent): event is AlbEvent {
  const context: unknown = (event as Partial<AlbEvent>).requestContext;
  return isObject(context) && isObject(context.elb);
}

/**
 * Every header of a REST or ALB event. `multiValueHeaders` holds every value, `headers` only the
 * last; when both are present, a name missing from `multiValueHeaders` is taken from `headers`.
 * Names keep their case: the receiver matches them case-insensitively.
 */
function mergedHeaders(
  single: LambdaEventHeaders | null | undefined,
  multi: LambdaEventMultiValueHeaders | null | undefined,
): HeadersInput {
  if (!isObject(multi)) return single ?? {};
  if (!isObject(single)) return multi;
  const merged: Record<string, string | string[] | undefined> = { ...multi };
  const known = new Set(Object.keys(multi).map((name) => name.toLowerCase()));
  for (const [name, value] of Object.entries(single)) {
    if (!known.has(name.toLowerCase())) merged[name] = value;
  }
  return merged;
}

/**
 * The shape, method and headers of an event. Throws `TypeError` for an event that is none of the
 * HTTP events (a direct invocation, an SQS batch...): nothing is accepted then.
 */
export function eventRequest(event: LambdaHttpEvent): EventRequest {
  if (!isObject(event)) throw new TypeError('The Lambda event is not an HTTP event.');
  if (isHttpApiEvent(event)) {
    return {
      shape: 'http',
      method: event.requestContext.http.method,
      headers: event.headers ?? {},
    };
  }
  if (typeof event.httpMethod !== 'string') {
    throw new TypeError(
      'The Lambda event is not an API Gateway, function URL or Application Load Balancer event.',
    );
  }
  const headers = mergedHeaders(event.headers, event.multiValueHeaders);
  if (!isAlbEvent(event)) return { shape: 'rest', method: event.httpMethod, headers };
  const multi = isObject(event.multiValueHeaders);
  return { shape: multi ? 'alb-multi' : 'alb', method: event.httpMethod, headers };
}

/**
 * The body's bytes: a base64 body decoded as bytes (not as a string, so any byte survives), any
 * other string as its UTF-8 bytes. Throws `PAYLOAD_TOO_LARGE` before decoding a body whose
 * length alone shows it is over `maxBytes`.
 */
export function eventBody(event: LambdaHttpEvent, maxBytes: number): RawBody | null {
  const { body } = event;
  if (typeof body !== 'string' || body === '') return null;
  const size = event.isBase64Encoded === true ? Buffer.byteLength(body, 'base64') : body.length;
  // A UTF-8 encoding is never shorter than the string's UTF-16 length; base64 decodes to `size`.
  if (size > maxBytes) {
    throw payloadTooLarge(maxBytes);
  }
  return event.isBase64Encoded === true ? Buffer.from(body, 'base64') : body;
}
