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

/**
 * The OpenTelemetry API when it is installed, else `undefined`. Resolved once per process, at the
 * first call (not when this module loads).
 */
export function otelApi(): OtelApi | undefined {
  if (cached === undefined) cached = load();
  return cached ?? undefined;
}

/** Instrumentation scope name of every span and metric. */
export const INSTRUMENTATION_SCOPE = '@churn-risk/core';

/**
 * Where every copy of the API (major version 1) keeps what an SDK registered. Reading it first
 * spares the API calls on every delivery when no SDK is registered.
 */
const GLOBAL_KEY = Symbol.for('opentelemetry.js.api.1');

/** What an SDK registered through the API: `undefined` fields when nothing is. */
export function registeredGlobals(): { trace?: unknown; metrics?: unknown } | undefined {
  return (globalThis as Record<symbol, { trace?: unknown; metrics?: unknown } | undefined>)[
    GLOBAL_KEY
  ];
}

/** True for the API's no-op providers (of any copy of the API). */
export const isNoop = (value: object, name: string): boolean => value.constructor.name === name;
