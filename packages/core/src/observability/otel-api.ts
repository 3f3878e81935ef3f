/**
 * `@opentelemetry/api`, loaded when it is installed and never required (it is an optional peer
 * dependency). The package's module graph has no static import of it: Node resolves it once,
 * synchronously, through `process.getBuiltinModule('node:module').createRequire`, so that the first
 * delivery is already instrumented. Where only Web APIs exist (edge runtimes, Workers) there is
 * no `getBuiltinModule`, nothing is loaded and nothing is recorded; bundlers see no import to
 * resolve. Two copies of the API (the CommonJS one loaded here, the ESM one an app imports) share
 * the registered SDK through the API's own global registry.
 */
import type * as OtelApiModule from '@opentelemetry/api';

/** The `@opentelemetry/api` module. */
export type OtelApi = typeof OtelApiModule;

type CreateRequire = (from: string) => (id: string) => unknown;

interface ProcessLike {
  getBuiltinModule?: (id: string) => { createRequire?: CreateRequire } | undefined;
  cwd?: () => string;
}

let cached: OtelApi | null | undefined;

function looksLikeOtelApi(value: unknown): value is OtelApi {
  const api = value as Partial<OtelApi> | null | undefined;
  return (
    typeof api?.trace?.getTracer === 'function' &&
    typeof api.metrics?.getMeterProvider === 'function' &&
    typeof api.context?.active === 'function'
  );
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
      const api = createRequire(origin)('@opentelemetry/api');
      if (looksLikeOtelApi(api)) return api;
    } catch {
      // not installed there
    }
  }
  return null;
}

/**
 * The OpenTelemetry API when it is installed, else `undefined`. Resolved once per process, at the
 * first call (not when this module loads).
 */
export function otelApi(): OtelApi | undefined {
  if (cached === undefined) cached = load();
  return cached ?? undefined;
}

/** For tests: forget the resolved API, or pretend it is `api` (`null`: not installed). */
export function setOtelApiForTests(api: OtelApi | null | undefined): void {
  cached = api;
}
