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
