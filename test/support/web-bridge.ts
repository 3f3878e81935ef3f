import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A Node request listener that turns each request into a Web `Request` for a route handler (what
 * Next does for an App Router route) and writes its `Response` back. Shared by the load tests and
 * the benchmarks, so that both measure the same bridge.
 */
export function webRequestListener(
  handler: (request: Request) => Promise<Response>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers.set(name, value);
        else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
      }
      const method = req.method ?? 'GET';
      const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
        method,
        headers,
        ...(method === 'GET' || method === 'HEAD' ? {} : { body: Buffer.concat(chunks) }),
      });
      handler(request)
        .then(async (response) => {
          const body = Buffer.from(await response.arrayBuffer());
          const out: Record<string, string> = {};
          response.headers.forEach((value, name) => (out[name] = value));
          res.writeHead(response.status, out).end(body);
        })
        .catch((error: unknown) => {
          console.error(error);
          res.writeHead(500).end();
        });
    });
  };
}
