/**
 * The pieces of a pass-through HTTP proxy that the load tests' proxies share: read a body, forward
 * a request to the target, and pick the answer's headers that can be relayed.
 */
import { request as httpRequest, type Agent, type IncomingMessage } from 'node:http';

/** A forwarded request's answer, read whole. */
export interface ForwardedAnswer {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** The whole body of `stream`. */
export function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** Sends `req` (its method and path, `headers`, `body`) to `target` and reads the answer. */
export function forward(
  agent: Agent,
  target: URL,
  req: IncomingMessage,
  body: Buffer,
  headers: IncomingMessage['headers'] = { ...req.headers, host: target.host },
): Promise<ForwardedAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers,
        agent,
      },
      (res) => {
        readAll(res).then(
          (answer) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: answer }),
          reject,
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The answer's headers a proxy relays (single values; not the connection's own). */
export function relayedHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string' && name !== 'connection' && name !== 'keep-alive') {
      out[name] = value;
    }
  }
  return out;
}
