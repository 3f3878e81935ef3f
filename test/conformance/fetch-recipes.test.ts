/**
 * The one-line recipes (docs/receiving.md) for fetch-based frameworks that need no package (h3/Nitro, React
 * Router, SvelteKit, Astro, and `waitUntil` from @vercel/functions), each mounted the way the
 * framework calls it, with the whole conformance suite where the framework runs in-process on
 * Node 20 (h3 v2 and React Router 7), and a test per recipe that the platform is handed the alert's
 * processing. Current SvelteKit and Astro need Node >= 22 and a build step to route a request, so
 * their recipes are run as the `receiver.fetch` calls they are, with the platform objects those
 * frameworks pass.
 */
import type { Receiver } from '@churn-risk/core';
import type { WaitUntil } from '@churn-risk/core/adapter';
import { waitUntil as vercelWaitUntil } from '@vercel/functions';
import { H3, serve, type H3Event } from 'h3';
import { createRequestHandler, type ServerBuild } from 'react-router';
import { afterEach, describe, expect, it } from 'vitest';
import {
  WEBHOOK_PATH,
  conformanceReceiver,
  gate,
  makeAlert,
  signedHeaders,
  type Gate,
} from './fixtures.js';
import { sendOverHttp } from './http-client.js';
import {
  runConformanceSuite,
  type ConformanceRequest,
  type ConformanceResponse,
  type MountAdapter,
} from './suite.js';

// ---- The recipes, as the README writes them -----------------------------------------------------

/** h3 v2 / Nitro: `app.post(path, (event) => receiver.fetch(event.req, { waitUntil: ... }))`. */
const h3Recipe =
  (receiver: Receiver) =>
  (event: H3Event): Promise<Response> =>
    receiver.fetch(event.req, { waitUntil: (promise) => event.waitUntil(promise) });

/** React Router 7 resource route: `export const action = ({ request, context }) => ...`. */
const reactRouterRecipe =
  (receiver: Receiver) =>
  ({ request, context: { cloudflare } }: RouterArgs): Promise<Response> =>
    receiver.fetch(request, { waitUntil: cloudflare && ((p) => cloudflare.ctx.waitUntil(p)) });

/** SvelteKit `+server.ts`: `export const POST: RequestHandler = ({ request, platform }) => ...`. */
const svelteKitRecipe =
  (receiver: Receiver) =>
  ({ request, platform }: SvelteKitArgs): Promise<Response> =>
    receiver.fetch(request, { waitUntil: platform?.ctx && ((p) => platform.ctx.waitUntil(p)) });

/** Astro endpoint: `export const POST: APIRoute = ({ request, locals }) => ...`. */
const astroRecipe =
  (receiver: Receiver) =>
  ({ request, locals: { cfContext } }: AstroArgs): Promise<Response> =>
    receiver.fetch(request, { waitUntil: cfContext && ((p) => cfContext.waitUntil(p)) });

/** What React Router passes an action (`context` as its Cloudflare template fills it). */
interface RouterArgs {
  request: Request;
  context: { cloudflare?: { ctx: ExecutionContextLike } };
}

/** What SvelteKit passes a `+server.ts` handler (`platform` from adapter-cloudflare). */
interface SvelteKitArgs {
  request: Request;
  platform?: { ctx: ExecutionContextLike } | undefined;
}

/** What Astro passes an endpoint (`locals.cfContext` from @astrojs/cloudflare 13+). */
interface AstroArgs {
  request: Request;
  locals: { cfContext?: ExecutionContextLike };
}

// ---- Helpers ------------------------------------------------------------------------------------

function toRequest({ method, headers, body }: ConformanceRequest): Request {
  return new Request(`http://localhost${WEBHOOK_PATH}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body }),
  });
}

async function fromResponse(response: Response): Promise<ConformanceResponse> {
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: await response.text(),
  };
}

/** A mount that hands the framework a Web `Request` in process. */
function inProcess(handle: (request: Request) => Promise<Response>): ReturnType<MountAdapter> {
  return Promise.resolve({
    send: async (request) => fromResponse(await handle(toRequest(request))),
    close: async () => undefined,
  });
}

/**
 * An execution context whose `waitUntil` only works when called on it, like workerd's (which
 * throws "Illegal invocation" when unbound): the recipes must call it, not pass it around.
 */
class ExecutionContextLike {
  readonly #handedOver: Promise<unknown>[] = [];

  get handedOver(): readonly Promise<unknown>[] {
    return this.#handedOver;
  }

  waitUntil(promise: Promise<unknown>): void {
    this.#handedOver.push(promise);
  }
}

/** A minimal React Router server build: a root route and the webhook as a resource route. */
function reactRouterBuild(receiver: Receiver): ServerBuild {
  const handler = reactRouterRecipe(receiver);
  return {
    entry: {
      module: {
        default: () => new Response('no documents in this build', { status: 500 }),
      },
    },
    routes: {
      root: { id: 'root', path: '', module: {} },
      'routes/webhooks.churn-risk': {
        id: 'routes/webhooks.churn-risk',
        parentId: 'root',
        path: WEBHOOK_PATH.slice(1),
        // `action` is the recipe; the same function as `loader` lets the receiver answer GET 405.
        module: { action: handler, loader: handler },
      },
    },
    assets: { entry: { imports: [], module: '' }, routes: {}, url: '', version: '1' },
    publicPath: '/',
    assetsBuildDirectory: 'build/client',
    future: {
      v8_middleware: false,
      v8_passThroughRequests: false,
      v8_trailingSlashAwareDataRequests: false,
    },
    ssr: true,
    isSpaMode: false,
    prerender: [],
    routeDiscovery: { mode: 'lazy', manifestPath: '/__manifest' },
  } as unknown as ServerBuild;
}

/** A receiver whose handler waits at `hold`; `finished` lists the alerts done. */
function heldReceiver(): { receiver: Receiver; hold: Gate; started: Gate; finished: unknown[] } {
  const receiver = conformanceReceiver();
  receivers.push(receiver);
  const hold = gate();
  const started = gate();
  const finished: unknown[] = [];
  receiver.on('churn_risk_alert', async (alert) => {
    started.open();
    await hold.promise;
    finished.push(alert.userId);
  });
  return { receiver, hold, started, finished };
}

function delivery(): Request {
  const body = JSON.stringify(makeAlert());
  return toRequest({ method: 'POST', headers: signedHeaders(body), body });
}

/** True once `promise` has settled (checked after the pending reactions ran). */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

/**
 * The keep-alive contract: the answer is 202 while the handler still runs, the platform was handed
 * exactly one promise, and that promise settles only once the handler has finished.
 */
async function expectHandedOver(
  held: ReturnType<typeof heldReceiver>,
  response: Response,
  handedOver: readonly Promise<unknown>[],
): Promise<void> {
  expect(response.status).toBe(202);
  await held.started.promise;
  expect(handedOver).toHaveLength(1);
  const [processing] = handedOver;
  expect(await isSettled(processing!)).toBe(false);
  held.hold.open();
  await processing;
  expect(held.finished).toHaveLength(1);
}

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close({ timeoutMs: 5000 })));
});

// ---- h3 v2 / Nitro ------------------------------------------------------------------------------

/** The recipe on every method (`app.all`), so the receiver also answers the 405 rows. */
function h3App(receiver: Receiver): H3 {
  return new H3().all(WEBHOOK_PATH, h3Recipe(receiver));
}

const h3OnNode: MountAdapter = async (receiver) => {
  const server = serve(h3App(receiver), {
    port: 0,
    hostname: '127.0.0.1',
    silent: true,
    gracefulShutdown: false,
  });
  await server.ready();
  const url = new URL(WEBHOOK_PATH, server.url).href;
  return { send: (request) => sendOverHttp(url, request), close: () => server.close(true) };
};

runConformanceSuite('recipe: h3 v2 on Node (srvx server, real sockets)', h3OnNode);
runConformanceSuite('recipe: h3 v2 on Node (srvx server, real sockets)', h3OnNode, {
  queue: 'redis',
});
runConformanceSuite('recipe: h3 v2 app.fetch (Web Request, as on Workers, Bun, Deno)', (receiver) =>
  inProcess((request) => Promise.resolve(h3App(receiver).fetch(request))),
);

describe('recipe: h3 v2 keeps the alert alive', () => {
  it('hands the processing to the runtime through event.waitUntil (request.waitUntil)', async () => {
    const held = heldReceiver();
    const ctx = new ExecutionContextLike();
    // srvx's Workers, Bun and Deno adapters put the runtime's waitUntil on the request.
    const request = delivery();
    Object.defineProperty(request, 'waitUntil', {
      value: (promise: Promise<unknown>) => ctx.waitUntil(promise),
    });
    const response = await new H3().post(WEBHOOK_PATH, h3Recipe(held.receiver)).fetch(request);
    await expectHandedOver(held, response, ctx.handedOver);
  });

  it("on Node, srvx's server.close() waits for an accepted alert's handlers", async () => {
    const held = heldReceiver();
    const server = serve(new H3().post(WEBHOOK_PATH, h3Recipe(held.receiver)), {
      port: 0,
      hostname: '127.0.0.1',
      silent: true,
      gracefulShutdown: false,
    });
    try {
      await server.ready();
      const body = JSON.stringify(makeAlert());
      const url = new URL(WEBHOOK_PATH, server.url).href;
      const answer = await sendOverHttp(url, {
        method: 'POST',
        headers: signedHeaders(body),
        body,
      });
      expect(answer.status).toBe(202);
      await held.started.promise;
      const closed = server.close(true);
      expect(await isSettled(closed)).toBe(false);
      held.hold.open();
      await closed;
      expect(held.finished).toHaveLength(1);
    } finally {
      held.hold.open();
      await server.close(true);
    }
  });
});

// ---- React Router 7 -----------------------------------------------------------------------------

runConformanceSuite('recipe: React Router 7 resource route (createRequestHandler)', (receiver) => {
  const handle = createRequestHandler(reactRouterBuild(receiver), 'production');
  return inProcess((request) => handle(request));
});

describe('recipe: React Router 7 keeps the alert alive', () => {
  it('hands the processing to context.cloudflare.ctx.waitUntil, called on the context', async () => {
    const held = heldReceiver();
    const ctx = new ExecutionContextLike();
    const handle = createRequestHandler(reactRouterBuild(held.receiver), 'production');
    const response = await handle(delivery(), { cloudflare: { ctx } });
    await expectHandedOver(held, response, ctx.handedOver);
  });
});

// ---- SvelteKit and Astro: the receiver.fetch calls the recipes are ------------------------------

describe('recipe: SvelteKit +server.ts POST', () => {
  it('hands the processing to platform.ctx.waitUntil (adapter-cloudflare)', async () => {
    const held = heldReceiver();
    const ctx = new ExecutionContextLike();
    const response = await svelteKitRecipe(held.receiver)({
      request: delivery(),
      platform: { ctx },
    });
    await expectHandedOver(held, response, ctx.handedOver);
  });

  it("processes in-process with adapter-node's platform ({ req }, no ctx)", async () => {
    const held = heldReceiver();
    const platform = { req: {} } as unknown as SvelteKitArgs['platform'];
    const response = await svelteKitRecipe(held.receiver)({ request: delivery(), platform });
    expect(response.status).toBe(202);
    held.hold.open();
    await held.receiver.drain({ timeoutMs: 5000 });
    expect(held.finished).toHaveLength(1);
  });
});

describe('recipe: Astro endpoint POST', () => {
  it('hands the processing to locals.cfContext.waitUntil (@astrojs/cloudflare)', async () => {
    const held = heldReceiver();
    const ctx = new ExecutionContextLike();
    const response = await astroRecipe(held.receiver)({
      request: delivery(),
      locals: { cfContext: ctx },
    });
    await expectHandedOver(held, response, ctx.handedOver);
  });

  it('processes in-process without cfContext (@astrojs/node)', async () => {
    const held = heldReceiver();
    const response = await astroRecipe(held.receiver)({ request: delivery(), locals: {} });
    expect(response.status).toBe(202);
    held.hold.open();
    await held.receiver.drain({ timeoutMs: 5000 });
    expect(held.finished).toHaveLength(1);
  });
});

// ---- Vercel: waitUntil from @vercel/functions, passed as it is ----------------------------------

describe('recipe: waitUntil from @vercel/functions (any of the recipes on Vercel)', () => {
  const REQUEST_CONTEXT = Symbol.for('@vercel/request-context');
  const global = globalThis as Record<symbol, unknown>;
  afterEach(() => {
    Reflect.deleteProperty(global, REQUEST_CONTEXT);
  });

  it("hands the processing to the function's request context", async () => {
    const held = heldReceiver();
    const ctx = new ExecutionContextLike();
    // What Vercel's runtime publishes for each invocation.
    global[REQUEST_CONTEXT] = {
      get: () => ({ waitUntil: (p: Promise<unknown>) => ctx.waitUntil(p) }),
    };
    const waitUntil: WaitUntil = vercelWaitUntil;
    const response = await held.receiver.fetch(delivery(), { waitUntil });
    await expectHandedOver(held, response, ctx.handedOver);
  });

  it('outside Vercel (local dev, tests) it is a no-op and the alert is processed in-process', async () => {
    const held = heldReceiver();
    const response = await held.receiver.fetch(delivery(), { waitUntil: vercelWaitUntil });
    expect(response.status).toBe(202);
    held.hold.open();
    await held.receiver.drain({ timeoutMs: 5000 });
    expect(held.finished).toHaveLength(1);
  });
});
