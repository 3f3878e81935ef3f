/**
 * The runtime host under `Deno.serve` (run as `deno run --conditions=@churn-risk/source
 * --sloppy-imports deno-server.ts`, TypeScript from source). Prints `{"listening":<port>}` once it
 * listens on 127.0.0.1, and exits when its stdin ends (the test process went away).
 */
import { honoMount } from './hono-mount.js';
import { createHost } from './host.js';

declare const Deno: {
  serve(
    options: { hostname: string; port: number; onListen(address: { port: number }): void },
    handler: (request: Request, info: unknown) => Promise<Response>,
  ): unknown;
  stdin: { readable: ReadableStream<Uint8Array> };
  exit(code: number): never;
};

const host = createHost({ hono: honoMount });
Deno.serve(
  {
    hostname: '127.0.0.1',
    port: 0,
    onListen: ({ port }) => console.log(JSON.stringify({ listening: port })),
  },
  (request, info) => host.fetch(request, info),
);

const stdin = Deno.stdin.readable.getReader();
while (!(await stdin.read()).done);
Deno.exit(0);
