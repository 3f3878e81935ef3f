/**
 * The `tracer` option's type: the part of an OpenTelemetry `Tracer` (`@opentelemetry/api`) that
 * the receiver calls, written out here so that core's types need no `@opentelemetry/api` (an
 * optional peer dependency). Any `Tracer` of the API fits.
 */

/** A span attribute value the receiver sets. */
export type TracerAttributeValue = string | number | boolean;

/** The ids of a span: OpenTelemetry's `SpanContext`. */
export interface TracerSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: { serialize(): string };
}

/** The part of an OpenTelemetry `Span` that the receiver calls. */
export interface TracerSpan {
  spanContext(): TracerSpanContext;
  setAttribute(key: string, value: TracerAttributeValue): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  end(): void;
}

/** The options the receiver gives its spans: fields of OpenTelemetry's `SpanOptions`. */
export interface TracerSpanOptions {
  /** `SpanKind`: 2 (`CLIENT`) for a delivery's `receive` span, 4 (`CONSUMER`) for a try's. */
  kind?: number;
  attributes?: Record<string, TracerAttributeValue>;
  /** Each link's span ids (without a `traceState`). */
  links?: { context: Omit<TracerSpanContext, 'traceState'> }[];
  root?: boolean;
}

/**
 * A tracer for the receiver's spans: an OpenTelemetry `Tracer`, such as
 * `trace.getTracer('my-worker')` of `@opentelemetry/api` or one of your SDK's tracer providers.
 */
export interface ReceiverTracer {
  /** Starts a span (the `receive` span of a delivery). */
  startSpan(name: string, options?: TracerSpanOptions): TracerSpan;
  /** Runs `fn` with a new span active (a handler try inside its `process` span). */
  startActiveSpan<T>(name: string, options: TracerSpanOptions, fn: (span: TracerSpan) => T): T;
}

/** The `tracer` option, checked: `undefined`, or an object with both methods (else `TypeError`). */
export function checkTracer(tracer: unknown): ReceiverTracer | undefined {
  if (tracer === undefined) return undefined;
  const candidate = tracer as ReceiverTracer | null;
  if (
    typeof candidate?.startSpan !== 'function' ||
    typeof candidate.startActiveSpan !== 'function'
  ) {
    throw new TypeError(
      'tracer must be an OpenTelemetry Tracer (with startSpan and startActiveSpan), such as trace.getTracer("my-app").',
    );
  }
  return candidate;
}
