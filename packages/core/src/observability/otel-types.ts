/**
 * The OpenTelemetry types that core's own declarations name, declared here by the members core
 * uses, so that the published `.d.ts` never imports `@opentelemetry/api`: it is an optional peer
 * dependency, and a project without it (a Worker typed with `@cloudflare/workers-types` alone)
 * type-checks with `skipLibCheck: false` (SPEC 18). The API's own `Span` and `SpanContext` fit
 * these; only `telemetry.ts`, which calls the API, uses the API's types (erased from the output).
 */

/** A span's identity: `SpanContext` of `@opentelemetry/api`, the members core reads. */
export interface SpanContext {
  /** 32 lowercase hex characters. */
  traceId: string;
  /** 16 lowercase hex characters. */
  spanId: string;
  /** The W3C trace flags (bit 0: sampled). */
  traceFlags: number;
  /** True for a context that came from another process (here: from a queued alert's carrier). */
  isRemote?: boolean | undefined;
  /** The W3C `tracestate`, when the span has one. */
  traceState?: { serialize(): string } | undefined;
}

/** A span: `Span` of `@opentelemetry/api`, the members core calls. */
export interface Span {
  spanContext(): SpanContext;
  setAttribute(key: string, value: string | number | boolean): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  end(): void;
}
