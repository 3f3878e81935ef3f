import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

// Requests written byte by byte on a raw socket: a body that drips, one shorter than its
// `Content-Length`, a method `fetch` cannot send (TRACE). The answer is read as the server writes
// it, and whether the server closed the connection is recorded.

/** What the server answered, and whether it closed the connection. */
export interface RawAnswer {
  /** The status code, or 0 when the connection closed with no answer. */
  status: number;
  /** The answer's headers, lower-case names. */
  headers: Record<string, string>;
  /** The answer's body as received. */
  body: string;
  /** True when the server ended the connection (within `closeWithinMs` of its answer). */
  closed: boolean;
  /** Milliseconds from the first byte written to the answer's first byte (for reports only). */
  answeredAfterMs: number;
}

/** A raw HTTP/1.1 request. */
export interface RawRequest {
  port: number;
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Written right after the head (a short body, or a body in full). */
  body?: string;
  /** Written one byte at a time, every `dripMs`, after `body`, until the server answers. */
  drip?: { chunked: boolean; everyMs: number };
  /** How long to wait for the server to close after its answer. Default 2,000 ms. */
  closeWithinMs?: number;
}

/**
 * Sends `request` on a socket of its own, with `Host` and `Connection: keep-alive` (so that a
 * close is the server's choice), and resolves once the server closed the connection or
 * `closeWithinMs` passed after its answer.
 */
export function rawRequest(request: RawRequest): Promise<RawAnswer> {
  const { port, method, path, headers = {}, body = '', drip, closeWithinMs = 2_000 } = request;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let answeredAt: number | undefined;
    let dripping: NodeJS.Timeout | undefined;
    let settled = false;
    const started = Date.now();
    const finish = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearInterval(dripping);
      socket.destroy();
      const split = received.indexOf('\r\n\r\n');
      const head = split === -1 ? received : received.slice(0, split);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const answerHeaders: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0)
          answerHeaders[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0),
        headers: answerHeaders,
        body: split === -1 ? '' : received.slice(split + 4),
        closed,
        answeredAfterMs: answeredAt === undefined ? -1 : answeredAt - started,
      });
    };
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      if (answeredAt === undefined) {
        answeredAt = Date.now();
        clearInterval(dripping);
        setTimeout(() => {
          finish(false);
        }, closeWithinMs).unref();
      }
      received += chunk;
    });
    socket.on('end', () => {
      finish(true);
    });
    socket.on('close', () => {
      finish(true);
    });
    socket.on('error', (error) => {
      if (answeredAt === undefined && received === '') reject(error);
      else finish(true);
    });
    socket.on('connect', () => {
      const head = Object.entries({
        host: `127.0.0.1:${String(port)}`,
        connection: 'keep-alive',
        ...(drip?.chunked === true ? { 'transfer-encoding': 'chunked' } : {}),
        ...headers,
      })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n`);
      if (body !== '') socket.write(drip?.chunked === true ? chunk(body) : body);
      if (drip === undefined) return;
      dripping = setInterval(() => {
        if (!socket.writable) return;
        socket.write(drip.chunked ? chunk(' ') : ' ');
      }, drip.everyMs);
    });
  });
}

/** `text` as one chunk of a chunked body. */
function chunk(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}

/** A server listening on 127.0.0.1: its port, and `close()`, which ends its open connections too. */
export interface LocalServer {
  port: number;
  close(): Promise<void>;
}

/** Starts `server` on a free port of 127.0.0.1 (a test's stalled requests are cut at `close()`). */
export async function listenLocal(server: Server): Promise<LocalServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
