/**
 * Test fixtures: HTTP events as AWS sends them to a Lambda function (fields, casing and base64
 * rules copied from the events API Gateway, function URLs and ALB deliver), for a webhook request.
 */
import type {
  AlbEvent,
  HttpApiEvent,
  LambdaEventHeaders,
  LambdaHttpEvent,
  RestApiEvent,
} from './lambda-events.js';

/** The request a fixture event carries. */
export interface EventInput {
  method?: string;
  /** Header name to one value, or to every value of a repeated header. */
  headers: Record<string, string | string[]>;
  /** A string is sent as text; bytes (or `base64: true`) are sent base64-encoded. */
  body?: string | Uint8Array;
  base64?: boolean;
}

/** The event sources createLambdaHandler accepts. */
export type EventSource = 'rest' | 'http' | 'function-url' | 'alb' | 'alb-multi';

export const EVENT_SOURCES: readonly EventSource[] = [
  'rest',
  'http',
  'function-url',
  'alb',
  'alb-multi',
];

const ACCOUNT = '123456789012';
const TRACE = 'Root=1-67891233-abcdef012345678912345678';
const SOURCE_IP = '203.0.113.7';
const USER_AGENT = 'churn-risk-webhooks/1.0';
const PATH = '/webhooks/churn-risk';

/** The headers AWS adds in front of a delivery to `host` (lower-case names). */
function forwardedHeaders(host: string): Record<string, string> {
  return {
    host,
    'user-agent': USER_AGENT,
    'x-amzn-trace-id': TRACE,
    'x-forwarded-for': SOURCE_IP,
    'x-forwarded-port': '443',
    'x-forwarded-proto': 'https',
  };
}

function encodedBody(input: EventInput): { body: string | null; isBase64Encoded: boolean } {
  const { body, base64 = false } = input;
  if (body === undefined) return { body: null, isBase64Encoded: false };
  if (typeof body !== 'string') {
    return { body: Buffer.from(body).toString('base64'), isBase64Encoded: true };
  }
  if (base64) return { body: Buffer.from(body, 'utf8').toString('base64'), isBase64Encoded: true };
  return { body, isBase64Encoded: false };
}

/** The last value of each header (what `headers` holds in a REST or ALB event). */
function lastValues(headers: Record<string, string | string[]>): LambdaEventHeaders {
  const out: LambdaEventHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = typeof value === 'string' ? value : value.at(-1);
  }
  return out;
}

function allValues(headers: Record<string, string | string[]>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = typeof value === 'string' ? [value] : value;
  }
  return out;
}

/** Lower-case names, repeated values joined with commas (HTTP API and function URLs). */
function joinedLowerCase(headers: Record<string, string | string[]>): LambdaEventHeaders {
  const out: LambdaEventHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name.toLowerCase()] = typeof value === 'string' ? value : value.join(',');
  }
  return out;
}

/** Header names title-cased, as some senders write them (`X-Service-Signature`). */
function titleCase(headers: Record<string, string | string[]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[
      name.replace(
        /(^|-)([a-z])/g,
        (_, dash: string, letter: string) => dash + letter.toUpperCase(),
      )
    ] = value;
  }
  return out;
}

/**
 * API Gateway REST API proxy event (payload 1.0). Header names keep the sender's case; here the
 * sender title-cases them.
 */
export function restApiEvent(input: EventInput): RestApiEvent & Record<string, unknown> {
  const method = input.method ?? 'POST';
  const headers = titleCase({
    ...forwardedHeaders('abc123defg.execute-api.eu-west-1.amazonaws.com'),
    ...input.headers,
  });
  return {
    resource: PATH,
    path: PATH,
    httpMethod: method,
    headers: lastValues(headers),
    multiValueHeaders: allValues(headers),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: {
      accountId: ACCOUNT,
      apiId: 'abc123defg',
      domainName: 'abc123defg.execute-api.eu-west-1.amazonaws.com',
      extendedRequestId: 'Hx8pDGw9DoEEb1Q=',
      httpMethod: method,
      identity: { sourceIp: SOURCE_IP, userAgent: USER_AGENT },
      path: `/prod${PATH}`,
      protocol: 'HTTP/1.1',
      requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
      requestTime: '15/Jan/2026:12:00:00 +0000',
      requestTimeEpoch: 1768478400000,
      resourceId: 'x1y2z3',
      resourcePath: PATH,
      stage: 'prod',
    },
    ...encodedBody(input),
  };
}

function v2Event(
  input: EventInput,
  routeKey: string,
  domainName: string,
): HttpApiEvent & Record<string, unknown> {
  const method = input.method ?? 'POST';
  const headers = joinedLowerCase({ ...forwardedHeaders(domainName), ...input.headers });
  const event = {
    version: '2.0',
    routeKey,
    rawPath: PATH,
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: ACCOUNT,
      apiId: domainName.split('.')[0],
      domainName,
      domainPrefix: domainName.split('.')[0],
      http: {
        method,
        path: PATH,
        protocol: 'HTTP/1.1',
        sourceIp: SOURCE_IP,
        userAgent: USER_AGENT,
      },
      requestId: 'JKJaXmPLvHcESHA=',
      routeKey,
      stage: '$default',
      time: '15/Jan/2026:12:00:00 +0000',
      timeEpoch: 1768478400000,
    },
    ...encodedBody(input),
  };
  return event; // AWS sends more than the handler reads
}

/** API Gateway HTTP API event (payload 2.0). */
export function httpApiEvent(input: EventInput): HttpApiEvent & Record<string, unknown> {
  const method = input.method ?? 'POST';
  return v2Event(input, `${method} ${PATH}`, 'r3pmxmplak.execute-api.eu-west-1.amazonaws.com');
}

/** Lambda function URL event (payload 2.0, route key `$default`). */
export function functionUrlEvent(input: EventInput): HttpApiEvent & Record<string, unknown> {
  return v2Event(input, '$default', 'a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6.lambda-url.eu-west-1.on.aws');
}

/** ALB target event; `multiValue` as with the target group's multi-value headers turned on. */
export function albEvent(
  input: EventInput,
  multiValue = false,
): AlbEvent & Record<string, unknown> {
  const headers = {
    ...forwardedHeaders('churn-risk-1234567890.eu-west-1.elb.amazonaws.com'),
    ...input.headers,
  };
  return {
    requestContext: {
      elb: {
        targetGroupArn: `arn:aws:elasticloadbalancing:eu-west-1:${ACCOUNT}:targetgroup/churn-risk/6d0ecf831eec9f09`,
      },
    },
    httpMethod: input.method ?? 'POST',
    path: PATH,
    ...(multiValue
      ? { multiValueQueryStringParameters: {}, multiValueHeaders: allValues(headers) }
      : { queryStringParameters: {}, headers: lastValues(headers) }),
    ...encodedBody(input),
  };
}

/** An event of `source` carrying `input`. */
export function eventFor(source: EventSource, input: EventInput): LambdaHttpEvent {
  switch (source) {
    case 'rest':
      return restApiEvent(input);
    case 'http':
      return httpApiEvent(input);
    case 'function-url':
      return functionUrlEvent(input);
    case 'alb':
      return albEvent(input);
    case 'alb-multi':
      return albEvent(input, true);
  }
}
