import type { OpsHandler } from '@churn-risk/ops';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// HTTP servers for the page's browser tests: the operations handler under `/ops` on 127.0.0.1,
// and a page of another origin (`localhost`) that posts a form to it, as a forged request would.

/** A running server and its origin. */
export interface RunningServer {
  origin: string;
  close(): Promise<void>;
}

async function listen(server: Server, host: string): Promise<RunningServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${String(port)}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** `ops.node` under `/ops`; anything else is 404. */
export function serveOps(ops: OpsHandler): Promise<RunningServer> {
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/ops') === true) {
      void ops.node(req, res);
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  return listen(server, '127.0.0.1');
}

/**
 * Another origin's page whose form posts `{"all":true}` as `text/plain` to `target` when it
 * loads: the cross-site request a CSRF attack sends with the victim's credentials.
 */
export function serveForgery(target: string): Promise<RunningServer> {
  const page = `<!doctype html><html><body>
<form id="f" method="POST" action="${target}" enctype="text/plain">
<input name='{"all":true,"x":"' value='"}'></form>
<script>document.getElementById('f').submit();</script></body></html>`;
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(page);
  });
  return listen(server, 'localhost');
}
