/**
 * `#otel` on Node (and runtimes that resolve the `node` condition: Bun, Deno): `@opentelemetry/api`,
 * loaded when it is installed and never required (it is an optional peer dependency). The
 * package's module graph has no static import of it: Node resolves it once, synchronously, through
 * `process.getBuiltinModule('node:module').createRequire`, so that the first delivery is already
 * instrumented. Two copies of the API (the CommonJS one loaded here, the ESM one an app imports)
 * share the registered SDK through the API's own global registry. Elsewhere `#otel` is
 * `otel-web.ts`, and a bundle for Workers holds none of this.
 */
import type { OtelApi } from './otel-api.js';
import { ReceiverMetrics, type LoadedOtel, type QueueDepth } from './receiver-metrics.js';

interface RequireLike {
  (id: string): unknown;
  resolve: { paths(request: string): string[] | null };
}
type CreateRequire = (from: string) => RequireLike;

interface ProcessLike {
  getBuiltinModule?: (id: string) => { createRequire?: CreateRequire } | undefined;
  cwd?: () => string;
}

const NAME = '@opentelemetry/api';

let cached: OtelApi | null | undefined;

function looksLikeOtelApi(value: unknown): value is OtelApi {
  const api = value as Partial<OtelApi> | null | undefined;
  return (
    typeof api?.trace?.getTracer === 'function' &&
    typeof api.metrics?.getMeterProvider === 'function' &&
    typeof api.context?.active === 'function'
  );
}

/**
 * The API by name; else its CommonJS entry (`main`) by path. The second way serves processes run
 * with a `module` export condition (vitest passes one to Node): there the name resolves to the
 * API's `module` build, whose extension-less ESM imports Node cannot load.
 */
function requireApi(require: RequireLike): unknown {
  try {
    return require(NAME);
  } catch {
    for (const dir of require.resolve.paths(NAME) ?? []) {
      try {
        const { main } = require(`${dir}/${NAME}/package.json`) as { main?: unknown };
        if (typeof main === 'string') return require(`${dir}/${NAME}/${main}`);
      } catch {
        // not installed there
      }
    }
    return undefined;
  }
}

/** Tries each place it may be installed: beside this package, then the app's working directory. */
function load(): OtelApi | null {
  const process = (globalThis as { process?: ProcessLike }).process;
  let createRequire: CreateRequire | undefined;
  try {
    createRequire = process?.getBuiltinModule?.('node:module')?.createRequire;
  } catch {
    return null;
  }
  if (typeof createRequire !== 'function') return null;
  const origins = [import.meta.url];
  if (typeof process?.cwd === 'function') origins.push(`${process.cwd()}/`);
  for (const origin of origins) {
    try {
      const api = requireApi(createRequire(origin));
      if (looksLikeOtelApi(api)) return api;
    } catch {
      // a bad origin: try the next
    }
  }
  return null;
}

/** The OpenTelemetry API when it is installed, else `undefined`. Resolved once per process. */
function otelApi(): OtelApi | undefined {
  if (cached === undefined) cached = load();
  return cached ?? undefined;
}

/**
 * The API and a receiver's metrics on it, when the API is installed (resolved at the first call,
 * not when this module loads), else `undefined`.
 *
 * @param depth reads the number of alerts waiting, for the `churn_risk.queue.depth` gauge
 */
export function loadOtel(depth: QueueDepth): LoadedOtel | undefined {
  const api = otelApi();
  return api === undefined ? undefined : { api, metrics: new ReceiverMetrics(api, depth) };
}
