/**
 * The runtime host under `Bun.serve` (run as `bun --conditions=@churn-risk/source bun-server.ts`,
 * TypeScript from source). Prints `{"listening":<port>}` once it listens on 127.0.0.1, and exits
 * when its stdin ends (the test process went away).
 */
import { honoMount } from './hono-mount.js';
import { createHost } from './host.js';

declare const Bun: {
  serve(options: {
    hostname: string;
    port: number;
    fetch(request: Request, server: unknown): Promise<Response>;
  }): { port: number };
  stdin: { stream(): ReadableStream<Uint8Array> };
};

const host = createHost({ hono: honoMount });
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: (request, bunServer) => host.fetch(request, bunServer),
});
console.log(JSON.stringify({ listening: server.port }));

const stdin = Bun.stdin.stream().getReader();
while (!(await stdin.read()).done);
process.exit(0);
