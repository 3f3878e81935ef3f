/**
 * The receivers a runtime test talks to, served from inside Bun, Deno or workerd. One process (one
 * isolate on workerd) hosts any number of receivers, each created by the test with the options its
 * case needs and reached on its own path:
 *
 * - `POST /_setup/<name>` `{ options, handler }`: builds `conformanceReceiver(options)` with one
 *   handler of the given behaviour (`record`, `gated`, `gated-io` or `fail`).
 * - `/r/<name>`: the receiver's own `receiver.fetch(request)`, with `ctx.waitUntil` when the
 *   runtime passes an execution context (workerd).
 * - `/bare/<name>`: `receiver.fetch(request)` with no `waitUntil`, whatever the runtime.
 * - `/hono/<name>`: `createHandler(receiver)` of `@churn-risk/hono` in a Hono app, whose `fetch` is
 *   called with the runtime's own arguments (so `c.executionCtx` exists on workerd only).
 * - `GET /_calls/<name>`: what the handler observed (`Observations`).
 * - `POST /_open/<name>`, `/_drain/<name>`, `/_close/<name>`: lets gated handlers go, waits for
 *   `receiver.drain()`, closes the receiver. `DELETE /_setup/<name>` closes and forgets it.
 * - `GET /_runtime`: which runtime answers.
 *
 * Runs in every runtime: no Node built-ins, only Web APIs and `@churn-risk/core`.
 */
import type { Receiver, ReceiverOptions, ReceiverStats } from '@churn-risk/core';
import { SECRET, conformanceReceiver } from '../conformance/fixtures.js';

/** What a receiver's one `churn_risk_alert` handler does. */
export type HandlerBehaviour =
  /** Records the alert and its identity, then `handled`. */
  | 'record'
  /** Records `handler started`, waits until `/_open`, then records `handler finished`. */
  | 'gated'
  /** Like `gated`, with one more asynchronous step (a timer, as I/O would be) after the gate. */
  | 'gated-io'
  /** Throws (a failure reported to `onError`). */
  | 'fail';

/** The paths a hosted receiver is reached on: `/<mount>/<name>`. */
export type HostMount = 'r' | 'bare' | 'hono';

/** The receiver options a case may set (the rest come from `conformanceReceiver`). */
export type HostedReceiverOptions = Partial<
  Pick<ReceiverOptions, 'maxBodyBytes' | 'concurrency' | 'maxQueue' | 'mode' | 'retries'>
>;

/** The body of `POST /_setup/<name>`. */
export interface SetupRequest {
  options: HostedReceiverOptions;
  handler: HandlerBehaviour;
}

/** What `GET /_calls/<name>` answers. */
export interface Observations {
  /**
   * In order: `handled`, `handler started`, `handler finished`, `answered <status>` (once the
   * mount produced its `Response`), `waitUntil called` and `waitUntil settled` (`ctx.waitUntil`
   * of workerd, on `/r/`), `drain started` and `drained`.
   */
  events: string[];
  /** The alerts the `record` handler got, with `context.id`. */
  alerts: { alert: unknown; id: string }[];
  /** How often `onError` was called. */
  errors: number;
  stats: ReceiverStats;
}

/** What `GET /_runtime` answers. */
export interface RuntimeInfo {
  /** `bun <version>`, `deno <version>`, or `workerd` (the Workers runtime). */
  runtime: string;
  /** `typeof globalThis.process`: `'undefined'` in workerd without `nodejs_compat`. */
  process: string;
}

/** The part of workerd's `ExecutionContext` the host uses. */
interface ExecutionContextLike {
  waitUntil(promise: Promise<unknown>): void;
}

/** A mounted Hono app: its `fetch`, called with the runtime's own arguments. */
export interface HonoMount {
  fetch(request: Request, env: unknown, ctx: unknown): Response | Promise<Response>;
}

/** Builds the Hono app serving `/hono/:name` from the host's receivers. */
export type HonoMountFactory = (hosted: HostedReceivers) => HonoMount;

/** Look-ups the Hono mount needs. */
export interface HostedReceivers {
  /** The receiver set up as `name`, or undefined. */
  receiver(name: string): Receiver | undefined;
  /** Records `answered <status>` for `name`. */
  answered(name: string, status: number): void;
}

interface Hosted {
  receiver: Receiver;
  events: string[];
  alerts: { alert: unknown; id: string }[];
  errors: number;
  /** Set by `/_open`: gated handlers go on. */
  open: boolean;
}

/** The host: a fetch function for the runtime's server. */
export interface Host {
  fetch(request: Request, env?: unknown, ctx?: unknown): Promise<Response>;
}

/** A short timer: the host's waits are driven by timers of their own request (see `keepAlive`). */
const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

/**
 * Awaits `promise` while a timer runs in the current request. workerd ends a request whose work
 * waits only on promises that another request settles (it reports a hung worker and cancels the
 * continuations); its own pending timer keeps it going, as real I/O would.
 */
async function keepAlive<T>(promise: Promise<T>): Promise<T> {
  const timer = setInterval(() => undefined, 5);
  try {
    return await promise;
  } finally {
    clearInterval(timer);
  }
}

const json = (status: number, value: unknown): Response =>
  new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json' },
  });

function isExecutionContext(value: unknown): value is ExecutionContextLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { waitUntil?: unknown }).waitUntil === 'function'
  );
}

function describeRuntime(): RuntimeInfo {
  const scope = globalThis as {
    Bun?: { version: string };
    Deno?: { version: { deno: string } };
    navigator?: { userAgent?: string };
    process?: unknown;
  };
  let runtime = 'unknown';
  if (scope.Bun !== undefined) runtime = `bun ${scope.Bun.version}`;
  else if (scope.Deno !== undefined) runtime = `deno ${scope.Deno.version.deno}`;
  else if (scope.navigator?.userAgent === 'Cloudflare-Workers') runtime = 'workerd';
  return { runtime, process: typeof scope.process };
}

function build(setup: SetupRequest): Hosted {
  const hosted: Hosted = {
    receiver: conformanceReceiver(setup.options),
    events: [],
    alerts: [],
    errors: 0,
    open: false,
  };
  const { receiver, events } = hosted;
  receiver.onError(() => {
    hosted.errors += 1;
  });
  switch (setup.handler) {
    case 'record':
      receiver.on('churn_risk_alert', async (alert, context) => {
        await Promise.resolve();
        hosted.alerts.push({ alert, id: context.id });
        events.push('handled');
      });
      break;
    case 'gated':
    case 'gated-io':
      receiver.on('churn_risk_alert', async () => {
        events.push('handler started');
        // A flag polled on a timer, not a promise that `/_open` resolves (see `keepAlive`).
        while (!hosted.open) await tick();
        if (setup.handler === 'gated-io') await tick();
        events.push('handler finished');
      });
      break;
    case 'fail':
      receiver.on('churn_risk_alert', () => {
        throw new Error(`database down (${SECRET.length})`);
      });
      break;
  }
  return hosted;
}

function observe(hosted: Hosted): Observations {
  const { events, alerts, errors, receiver } = hosted;
  return { events, alerts, errors, stats: receiver.stats };
}

/** Creates the host; `hono` adds the `/hono/<name>` routes. */
export function createHost({ hono }: { hono?: HonoMountFactory } = {}): Host {
  const receivers = new Map<string, Hosted>();
  const honoMount = hono?.({
    receiver: (name) => receivers.get(name)?.receiver,
    answered: (name, status) => receivers.get(name)?.events.push(`answered ${status}`),
  });

  async function route(request: Request, env: unknown, ctx: unknown): Promise<Response> {
    const url = new URL(request.url);
    const [, area = '', name = '', ...rest] = url.pathname.split('/');
    if (area === '_runtime') return json(200, describeRuntime());
    if (rest.length > 0 || !/^[\w-]+$/.test(name)) return json(404, { error: 'no such route' });
    if (area === '_setup' && request.method === 'POST') {
      const previous = receivers.get(name);
      if (previous !== undefined) await keepAlive(previous.receiver.close({ timeoutMs: 10_000 }));
      receivers.set(name, build((await request.json()) as SetupRequest));
      return json(201, { name });
    }
    const hosted = receivers.get(name);
    if (hosted === undefined) return json(404, { error: `no receiver ${name}` });
    const { receiver, events } = hosted;

    switch (area) {
      case 'r': {
        const waitUntil = isExecutionContext(ctx)
          ? (promise: Promise<unknown>) => {
              events.push('waitUntil called');
              ctx.waitUntil(promise.finally(() => events.push('waitUntil settled')));
            }
          : undefined;
        const response = await receiver.fetch(request, { waitUntil });
        events.push(`answered ${response.status}`);
        return response;
      }
      case 'bare': {
        const response = await receiver.fetch(request);
        events.push(`answered ${response.status}`);
        return response;
      }
      case 'hono':
        if (honoMount === undefined) return json(404, { error: 'no Hono app in this host' });
        return honoMount.fetch(request, env, ctx);
      case '_calls':
        return json(200, observe(hosted));
      case '_open':
        hosted.open = true;
        return json(200, observe(hosted));
      case '_drain':
        events.push('drain started');
        await keepAlive(receiver.drain({ timeoutMs: 10_000 }));
        events.push('drained');
        return json(200, observe(hosted));
      case '_close':
        await keepAlive(receiver.close({ timeoutMs: 10_000 }));
        return json(200, observe(hosted));
      case '_setup':
        if (request.method !== 'DELETE') break;
        receivers.delete(name);
        hosted.open = true;
        try {
          await keepAlive(receiver.close({ timeoutMs: 10_000 }));
          return json(200, { name, closed: true });
        } catch {
          return json(200, { name, closed: false }); // a handler still runs: the case said why
        }
    }
    return json(404, { error: 'no such route' });
  }

  return {
    async fetch(request, env, ctx) {
      try {
        return await route(request, env, ctx);
      } catch (error) {
        // A failure of the host itself (never of the receiver, which answers on its own).
        const message = error instanceof Error ? error.message : String(error);
        return json(599, { error: `host: ${message}` });
      }
    },
  };
}
