import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConformanceRequest, ConformanceResponse, MountedAdapter } from './suite.js';

/**
 * Sends one request over a real socket to `url` with node:http (the exact body bytes, a
 * Content-Length, no re-encoding) and reads the whole answer.
 */
export function sendOverHttp(
  url: string,
  request: ConformanceRequest,
): Promise<ConformanceResponse> {
  return new Promise((resolve, reject) => {
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    const headers: Record<string, string | number> = { ...request.headers };
    if (body !== undefined) headers['content-length'] = body.length;
    const outgoing = httpRequest(url, { method: request.method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const responseHeaders: Record<string, string | undefined> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          responseHeaders[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        resolve({
          status: res.statusCode ?? 0,
          headers: responseHeaders,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    // A server may answer (413) and close before it has read the whole body: the answer wins.
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Starts `server` on an ephemeral port of 127.0.0.1 and resolves with its base URL. */
export async function listenLocal(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/** Closes `server`, dropping idle keep-alive connections. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => {
      if (error) reject(error);
      else resolve();
    });
    server.closeAllConnections();
  });
}

/** A `MountedAdapter` for a listening node:http server; `path` is where the receiver is mounted. */
export async function mountServer(server: Server, path: string): Promise<MountedAdapter> {
  const base = await listenLocal(server);
  return {
    send: (request) => sendOverHttp(`${base}${path}`, request),
    close: () => closeServer(server),
  };
}
