/**
 * The `tracer` option's type: the part of an OpenTelemetry `Tracer` (`@opentelemetry/api`) that
 * the receiver calls, written out here so that core's types need no `@opentelemetry/api` (an
 * optional peer dependency). Any `Tracer` of the API fits.
 */

/** A span attribute value the receiver sets. */
export type TracerAttributeValue = string | number | boolean;

/** The ids of a span: OpenTelemetry's `SpanContext`. */
export interface TracerSpanContext {
  /** 32 hex digits. */
  traceId: string;
  /** 16 hex digits. */
  spanId: string;
  /** W3C trace flags (1: sampled). */
  traceFlags: number;
  /** True for a context that came from another process. */
  isRemote?: boolean;
  /** The W3C `tracestate`. */
  traceState?: {
    /** The `tracestate` header value. */
    serialize(): string;
  };
}

/** The part of an OpenTelemetry `Span` that the receiver calls. */
export interface TracerSpan {
  /** The span's ids (a process span links to its receive span by them). */
  spanContext(): TracerSpanContext;
  /** Sets one attribute (`http.response.status_code`, `error.type`...). */
  setAttribute(key: string, value: TracerAttributeValue): unknown;
  /** Sets the status: `code` 2 (`SpanStatusCode.ERROR`) for a refusal or a failed try. */
  setStatus(status: { code: number; message?: string }): unknown;
  /** Records what a failed try threw. */
  recordException(exception: Error | string): void;
  /** Ends the span. */
  end(): void;
}

/** The options the receiver gives its spans: fields of OpenTelemetry's `SpanOptions`. */
export interface TracerSpanOptions {
  /** `SpanKind`: 2 (`CLIENT`) for a delivery's `receive` span, 4 (`CONSUMER`) for a try's. */
  kind?: number;
  /** The span's attributes at its start. */
  attributes?: Record<string, TracerAttributeValue>;
  /** Each link's span ids (without a `traceState`). */
  links?: { context: Omit<TracerSpanContext, 'traceState'> }[];
  /** True: a new trace (a try's span), linked rather than a child. */
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
