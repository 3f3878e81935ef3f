/**
 * A tiny local stand-in for a Lambda function URL: a node:http server on 127.0.0.1 that turns each
 * request into a payload 2.0 event the way AWS does, invokes the handler, and writes its result
 * back. Only for tests: one invocation at a time per request, no timeouts, no IAM.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyResultV2,
  APIGatewayProxyStructuredResultV2,
  Context,
} from 'aws-lambda';

/** Lambda's context object without its deprecated `done`, `fail` and `succeed`. */
export type InvocationContext = Omit<Context, 'done' | 'fail' | 'succeed'>;

/** A handler as a function URL invokes it. */
export type FunctionUrlHandler = (
  event: APIGatewayProxyEventV2,
  context: InvocationContext,
) => Promise<APIGatewayProxyResultV2>;

/** When AWS base64-encodes the body: binary content types only (function URLs), or always. */
export type Base64Rule = 'binary' | 'always';

/** One invocation, as the emulator saw it. */
export interface Invocation {
  event: APIGatewayProxyEventV2;
  result: APIGatewayProxyResultV2 | undefined;
}

/** A running emulator. */
export interface FunctionUrl {
  /** `http://127.0.0.1:<port>` */
  url: string;
  readonly invocations: readonly Invocation[];
  close(): Promise<void>;
}

/** Content types a function URL passes as text; any other body arrives base64-encoded. */
const TEXT_TYPES =
  /^(text\/|application\/(json|javascript|xml|x-www-form-urlencoded)|[^;]*\+(json|xml))/i;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** Lower-case names; repeated headers joined with commas; cookies apart, as AWS does. */
function eventHeaders(req: IncomingMessage): {
  headers: Record<string, string>;
  cookies: string[];
} {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = (req.rawHeaders[i] ?? '').toLowerCase();
    const value = req.rawHeaders[i + 1] ?? '';
    if (name === 'cookie') cookies.push(...value.split(/;\s*/));
    else headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  return { headers, cookies };
}

function toEvent(req: IncomingMessage, body: Buffer, rule: Base64Rule): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? '/', 'http://function-url.invalid');
  const { headers, cookies } = eventHeaders(req);
  const now = new Date();
  const base64 = rule === 'always' || !TEXT_TYPES.test(headers['content-type'] ?? '');
  const domainName = headers.host ?? '127.0.0.1';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(url.search === '' ? {} : { queryStringParameters: Object.fromEntries(url.searchParams) }),
    requestContext: {
      accountId: 'anonymous',
      apiId: 'emulated',
      domainName,
      domainPrefix: 'emulated',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.byteLength === 0
      ? {}
      : { body: base64 ? body.toString('base64') : body.toString('utf8') }),
    isBase64Encoded: base64 && body.byteLength > 0,
  };
}

function lambdaContext(requestId: string): InvocationContext {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'churn-risk-webhooks',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:churn-risk-webhooks',
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: '/aws/lambda/churn-risk-webhooks',
    logStreamName: 'emulated',
    getRemainingTimeInMillis: () => 30_000,
  };
}

/** Writes a handler result back as a function URL does (a string result is a JSON 200). */
function writeResult(res: ServerResponse, result: APIGatewayProxyResultV2): void {
  const structured: APIGatewayProxyStructuredResultV2 =
    typeof result === 'string'
      ? { statusCode: 200, headers: { 'content-type': 'application/json' }, body: result }
      : result;
  const body = structured.isBase64Encoded
    ? Buffer.from(structured.body ?? '', 'base64')
    : Buffer.from(structured.body ?? '', 'utf8');
  res.statusCode = structured.statusCode ?? 200;
  for (const [name, value] of Object.entries(structured.headers ?? {})) {
    res.setHeader(name, String(value));
  }
  if (structured.cookies !== undefined) res.setHeader('set-cookie', structured.cookies);
  res.end(body);
}

/**
 * Starts the emulator on a free port of 127.0.0.1. `onSettled` runs right after the handler's
 * promise settled, before the answer is written: the moment Lambda would freeze the environment.
 */
export async function startFunctionUrl(
  handler: FunctionUrlHandler,
  { base64 = 'binary', onSettled }: { base64?: Base64Rule; onSettled?: () => void } = {},
): Promise<FunctionUrl> {
  const invocations: Invocation[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const event = toEvent(req, await readBody(req), base64);
      const invocation: Invocation = { event, result: undefined };
      invocations.push(invocation);
      try {
        invocation.result = await handler(event, lambdaContext(event.requestContext.requestId));
      } catch {
        onSettled?.();
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end('{"Message":"Internal Server Error"}');
        return;
      }
      onSettled?.();
      writeResult(res, invocation.result);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    invocations,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
