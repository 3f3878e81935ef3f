/**
 * A keep-alive HTTP sender and a fixed pool of async workers, for pushing many requests at
 * 127.0.0.1 with a bounded number of connections.
 */
import { Agent, request as httpRequest } from 'node:http';

/** What came back from one request. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A keep-alive agent with at most `maxSockets` connections. Destroy it when done. */
export function keepAliveAgent(maxSockets: number): Agent {
  return new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
}

/** Sends one request with the exact body bytes and reads the whole answer. */
export function send(
  agent: Agent,
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string | Uint8Array },
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const body = init.body === undefined ? undefined : Buffer.from(init.body);
    const headers: Record<string, string | number> = { ...init.headers };
    if (body !== undefined) headers['content-length'] = body.length;
    const outgoing = httpRequest(url, { method: init.method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * Runs `workers` async workers; each takes the next job from `next()` until it returns
 * `undefined`, and runs `work(job)`. Resolves when every worker has stopped; rejects with the first
 * error of `work` (the other workers stop taking jobs).
 */
export async function runPool<J>(
  workers: number,
  next: () => J | undefined,
  work: (job: J) => Promise<void>,
): Promise<void> {
  let failed = false;
  const worker = async (): Promise<void> => {
    for (let job = next(); job !== undefined && !failed; job = next()) {
      try {
        await work(job);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, () => worker()));
}
