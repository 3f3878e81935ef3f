import type {
  Span as OtelSpan,
  SpanContext as OtelSpanContext,
  Tracer,
  TracerProvider,
} from '@opentelemetry/api';
import { VERSION } from '../client/version.js';
import {
  INSTRUMENTATION_SCOPE,
  isNoop,
  otelApi,
  registeredGlobals,
  type OtelApi,
} from './otel-api.js';
import type { Span, SpanContext } from './otel-types.js';
import { ReceiverMetrics, type QueueDepth } from './receiver-metrics.js';

/** Span names of SPEC section 10. */
export const SPAN_NAMES = Object.freeze({
  receive: 'receive churn_risk_alert',
  process: 'process churn_risk_alert',
});

/** Messaging semantic conventions shared by both spans. */
const MESSAGING = {
  'messaging.system': 'churn_risk',
  'messaging.destination.name': 'churn_risk_alert',
};

/** A handler try being measured: its span (when tracing) and its start. */
export interface TryRecord {
  span: Span | undefined;
  started: number;
}

/** The error's type for `error.type`: its name, else its constructor's, else `_OTHER`. */
export function errorType(error: unknown): string {
  if (error instanceof Error) return error.name;
  const name = (error as { constructor?: { name?: unknown } } | null | undefined)?.constructor
    ?.name;
  return typeof name === 'string' && name !== '' ? name : '_OTHER';
}

/**
 * A receiver's OpenTelemetry spans and metrics. Each call first checks, cheaply, whether an SDK is
 * registered (it may be registered or replaced after the receiver was created); with the API
 * installed but no SDK, a delivery allocates nothing here. An interface, so that the types that
 * name it (`TryInput`) do not reach the API's own types (see `otel-types.ts`).
 */
export interface ReceiverTelemetry {
  /** Starts the `receive` span of a delivery; `undefined` when no SDK records traces. */
  startReceive(): Span | undefined;
  /** Ends the delivery: the span's answer attributes, and the delivery counter. */
  endReceive(span: Span | undefined, status: number, code: string | undefined): void;
  /** Starts a handler try: a `process` span linked to `link` (the receive span), and its clock. */
  startTry(
    link: SpanContext | undefined,
    id: string,
    attempt: number,
    handlerId?: string,
  ): TryRecord | undefined;
  /** Runs `fn` with the try's span active, so the handler's own spans are its children. */
  runInTry<T>(record: TryRecord | undefined, fn: () => T): T;
  /** Ends a try: the error on its span when it failed, and its duration. */
  endTry(record: TryRecord | undefined, failed: boolean, error?: unknown): void;
  /** Stops observing the queue depth (at `close()`). */
  dispose(): void;
}

/** `ReceiverTelemetry` on the installed `@opentelemetry/api`. */
class OtelTelemetry implements ReceiverTelemetry {
  readonly #api: OtelApi;
  readonly #metrics: ReceiverMetrics;
  #tracerProvider: TracerProvider | undefined;
  #tracer: Tracer | undefined;

  /** `depth` reads the number of alerts waiting, for the `churn_risk.queue.depth` gauge. */
  constructor(api: OtelApi, depth: QueueDepth) {
    this.#api = api;
    this.#metrics = new ReceiverMetrics(api, depth);
  }

  /** The tracer of the registered SDK, or `undefined` when none records traces. */
  #liveTracer(): Tracer | undefined {
    if (registeredGlobals()?.trace === undefined) return undefined; // no SDK: one property read
    const provider = this.#api.trace.getTracerProvider();
    // The API's proxy provider gets its delegate when an SDK registers, possibly after this.
    const delegate =
      (provider as { getDelegate?: () => TracerProvider }).getDelegate?.() ?? provider;
    if (delegate !== this.#tracerProvider) {
      this.#tracerProvider = delegate;
      this.#tracer = isNoop(delegate, 'NoopTracerProvider')
        ? undefined
        : delegate.getTracer(INSTRUMENTATION_SCOPE, VERSION);
    }
    return this.#tracer;
  }

  /** Starts the `receive` span of a delivery; `undefined` when no SDK records traces. */
  startReceive(): Span | undefined {
    const tracer = this.#liveTracer();
    if (tracer === undefined) return undefined;
    return tracer.startSpan(SPAN_NAMES.receive, {
      kind: this.#api.SpanKind.CLIENT, // a `receive` operation
      attributes: {
        ...MESSAGING,
        'messaging.operation.type': 'receive',
        'messaging.operation.name': 'receive',
      },
    });
  }

  /** Ends the delivery: the span's answer attributes, and the delivery counter. */
  endReceive(span: Span | undefined, status: number, code: string | undefined): void {
    if (span !== undefined) {
      span.setAttribute('http.response.status_code', status);
      if (code !== undefined) {
        span.setAttribute('error.type', code);
        span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: code });
      }
      span.end();
    }
    this.#metrics.countDelivery(status, code);
  }

  /** Starts a handler try: a `process` span linked to `link` (the receive span), and its clock. */
  startTry(
    link: SpanContext | undefined,
    id: string,
    attempt: number,
    handlerId?: string,
  ): TryRecord | undefined {
    const tracer = this.#liveTracer();
    if (tracer === undefined && this.#metrics.instruments() === undefined) return undefined;
    const span = tracer?.startSpan(SPAN_NAMES.process, {
      kind: this.#api.SpanKind.CONSUMER, // a `process` operation
      root: true,
      links: link === undefined ? [] : [{ context: link as OtelSpanContext }],
      attributes: {
        ...MESSAGING,
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.message.id': id,
        'churn_risk.handler.attempt': attempt,
        ...(handlerId === undefined ? {} : { 'churn_risk.handler.id': handlerId }),
      },
    });
    return { span, started: performance.now() };
  }

  /** Runs `fn` with the try's span active, so the handler's own spans are its children. */
  runInTry<T>(record: TryRecord | undefined, fn: () => T): T {
    const span = record?.span;
    if (span === undefined) return fn();
    const { context, trace } = this.#api;
    return context.with(trace.setSpan(context.active(), span as OtelSpan), fn);
  }

  /** Ends a try: the error on its span when it failed, and its duration. */
  endTry(record: TryRecord | undefined, failed: boolean, error?: unknown): void {
    if (record === undefined) return;
    const { span } = record;
    if (span !== undefined) {
      if (failed) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setAttribute('error.type', errorType(error));
        span.setStatus({ code: this.#api.SpanStatusCode.ERROR });
      }
      span.end();
    }
    this.#metrics.recordTry((performance.now() - record.started) / 1000, failed);
  }

  /** Stops observing the queue depth (at `close()`). */
  dispose(): void {
    this.#metrics.dispose();
  }
}

/**
 * The receiver's telemetry when `@opentelemetry/api` is installed, else `undefined` (then nothing
 * is recorded and nothing fails).
 */
export function createReceiverTelemetry(depth: QueueDepth): ReceiverTelemetry | undefined {
  const api = otelApi();
  return api === undefined ? undefined : new OtelTelemetry(api, depth);
}
