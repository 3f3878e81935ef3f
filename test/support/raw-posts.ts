import { request as httpRequest } from 'node:http';

/** What `postChunked` read back. */
export interface ChunkedAnswer {
  status: number;
  /** The answer's `Connection` header (`close` after a body refused while reading). */
  connection: string | undefined;
  body: string;
}

/**
 * POSTs `chunks` to `url` with chunked transfer encoding (no Content-Length), writing one after
 * another on a connection of its own, and reads the whole answer.
 */
export function postChunked(
  url: string,
  headers: Record<string, string>,
  chunks: readonly string[],
): Promise<ChunkedAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: 'POST', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: text });
      });
    });
    outgoing.on('error', reject);
    for (const chunk of chunks) outgoing.write(chunk);
    outgoing.end();
  });
}

/**
 * Starts a POST of `body` to `url` with its full `Content-Length`, writes its first 20 bytes and
 * destroys the socket: a client that goes away mid-body. Resolves once the request has closed.
 */
export function abandonMidBody(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const outgoing = httpRequest(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(body.length) },
      agent: false,
    });
    outgoing.on('error', () => resolve());
    outgoing.on('close', () => resolve());
    outgoing.write(body.slice(0, 20), () => outgoing.destroy());
  });
}
