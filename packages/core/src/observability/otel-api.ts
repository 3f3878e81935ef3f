/**
 * What the receiver's OpenTelemetry code shares: the API's type, the instrumentation scope and the
 * API's global registry. Loading the API is `#otel`'s job: `otel-node.ts` on Node,
 * `otel-web.ts` (nothing to load) where only Web APIs exist.
 */
import type * as OtelApiModule from '@opentelemetry/api';

/** The `@opentelemetry/api` module. */
export type OtelApi = typeof OtelApiModule;

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
