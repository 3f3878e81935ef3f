import type { Span, TracerProvider } from '@opentelemetry/api';
import { VERSION } from '../version.js';
import { loadOtel } from '#otel';
import { INSTRUMENTATION_SCOPE, isNoop, registeredGlobals, type OtelApi } from './otel-api.js';
import type { LoadedOtel, QueueDepth, ReceiverMetrics } from './receiver-metrics.js';
import type {
  ReceiverTracer,
  TracerSpan,
  TracerSpanContext,
  TracerSpanOptions,
} from './receiver-tracer.js';

/** The receiver's OpenTelemetry span names. */
export const SPAN_NAMES = Object.freeze({
  receive: 'receive churn_risk_alert',
  process: 'process churn_risk_alert',
});

/** Messaging semantic conventions shared by both spans. */
const MESSAGING = {
  'messaging.system': 'churn_risk',
  'messaging.destination.name': 'churn_risk_alert',
};

/**
 * Values of the OpenTelemetry API's `SpanKind` and `SpanStatusCode` (fixed by the specification),
 * so that a tracer handed in works where the API module itself cannot be loaded (Workers).
 */
const CLIENT = 2; // SpanKind.CLIENT: a `receive` operation
const CONSUMER = 4; // SpanKind.CONSUMER: a `process` operation
const ERROR = 2; // SpanStatusCode.ERROR

/** A handler try being measured: its span (when tracing) and its start. */
export interface TryRecord {
  span: TracerSpan | undefined;
  started: number;
  /** With a tracer handed in: the options of the `process` span that `runInTry` starts. */
  pending?: TracerSpanOptions | undefined;
}

/** The error's type for `error.type`: its name, else its constructor's, else `_OTHER`. */
export function errorType(error: unknown): string {
  if (error instanceof Error) return error.name;
  const name = (error as { constructor?: { name?: unknown } } | null | undefined)?.constructor
    ?.name;
  return typeof name === 'string' && name !== '' ? name : '_OTHER';
}

/**
 * A receiver's OpenTelemetry spans and metrics. An interface, so that the types that name it
 * (`TryInput`) do not reach `@opentelemetry/api`'s own types: core's published declarations need
 * neither the API nor `@types/node`, so they type-check without Node's types.
 */
export interface ReceiverTelemetry {
  /** Starts the `receive` span of a delivery; `undefined` when no SDK records traces. */
  startReceive(): TracerSpan | undefined;
  /** Ends the delivery: the span's answer attributes, and the delivery counter. */
  endReceive(span: TracerSpan | undefined, status: number, code: string | undefined): void;
  /** Starts a handler try: a `process` span linked to `link` (the receive span), and its clock. */
  startTry(
    link: TracerSpanContext | undefined,
    id: string,
    attempt: number,
    handlerId?: string,
  ): TryRecord | undefined;
  /** Runs `fn` with the try's span active, so the handler's own spans are its children. */
  runInTry<T>(record: TryRecord | undefined, fn: () => T): T;
  /** Ends a try: the error on its span when it failed, and its duration. */
  endTry(record: TryRecord | undefined, failed: boolean, error?: unknown): void;
  /** Counts a handler run skipped for a superseded alert (`churn_risk.alert.superseded`). */
  countSuperseded(handlerId: string | undefined): void;
  /** Stops observing the queue depth (at `close()`). */
  dispose(): void;
}

/**
 * A receiver's OpenTelemetry spans and metrics. Spans go to the `tracer` option when one is handed
 * in, else to the SDK registered through `@opentelemetry/api` (when the API could be loaded).
 * Metrics need the API. Each call first checks, cheaply, whether an SDK is registered (it may be
 * registered or replaced after the receiver was created); with the API installed but no SDK and
 * no tracer, a delivery allocates nothing here.
 */
class OtelTelemetry implements ReceiverTelemetry {
  /** `undefined` where the API cannot be loaded (Workers): then `#handed` is set. */
  readonly #api: OtelApi | undefined;
  readonly #metrics: ReceiverMetrics | undefined;
  /** The `tracer` option: every span goes to it. */
  readonly #handed: ReceiverTracer | undefined;
  #tracerProvider: TracerProvider | undefined;
  #tracer: ReceiverTracer | undefined;

  /**
   * @param loaded the OpenTelemetry API and the metrics on it, when the API could be loaded
   * @param tracer the `tracer` option
   */
  constructor(loaded: LoadedOtel | undefined, tracer?: ReceiverTracer) {
    this.#api = loaded?.api;
    this.#metrics = loaded?.metrics;
    this.#handed = tracer;
  }

  /** The tracer handed in, else the registered SDK's, else `undefined` (no traces recorded). */
  #liveTracer(): ReceiverTracer | undefined {
    if (this.#handed !== undefined) return this.#handed;
    if (this.#api === undefined) return undefined;
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
  startReceive(): TracerSpan | undefined {
    const tracer = this.#liveTracer();
    if (tracer === undefined) return undefined;
    return tracer.startSpan(SPAN_NAMES.receive, {
      kind: CLIENT,
      attributes: {
        ...MESSAGING,
        'messaging.operation.type': 'receive',
        'messaging.operation.name': 'receive',
      },
    });
  }

  /** Ends the delivery: the span's answer attributes, and the delivery counter. */
  endReceive(span: TracerSpan | undefined, status: number, code: string | undefined): void {
    if (span !== undefined) {
      span.setAttribute('http.response.status_code', status);
      if (code !== undefined) {
        span.setAttribute('error.type', code);
        span.setStatus({ code: ERROR, message: code });
      }
      span.end();
    }
    this.#metrics?.countDelivery(status, code);
  }

  /** Starts a handler try: a `process` span linked to `link` (the receive span), and its clock. */
  startTry(
    link: TracerSpanContext | undefined,
    id: string,
    attempt: number,
    handlerId?: string,
  ): TryRecord | undefined {
    const tracer = this.#liveTracer();
    if (tracer === undefined) {
      return this.#metrics?.instruments() === undefined
        ? undefined
        : { span: undefined, started: performance.now() };
    }
    const options: TracerSpanOptions = {
      kind: CONSUMER,
      root: true,
      links: link === undefined ? [] : [{ context: link }],
      attributes: {
        ...MESSAGING,
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.message.id': id,
        'churn_risk.handler.attempt': attempt,
        ...(handlerId === undefined ? {} : { 'churn_risk.handler.id': handlerId }),
      },
    };
    // A tracer handed in starts the span in `runInTry`, with its own context machinery.
    if (tracer === this.#handed)
      return { span: undefined, started: performance.now(), pending: options };
    return { span: tracer.startSpan(SPAN_NAMES.process, options), started: performance.now() };
  }

  /** Runs `fn` with the try's span active, so the handler's own spans are its children. */
  runInTry<T>(record: TryRecord | undefined, fn: () => T): T {
    const pending = record?.pending;
    if (record !== undefined && pending !== undefined && this.#handed !== undefined) {
      // `startActiveSpan` makes the span active through the tracer's own copy of the API, so
      // this works where `@opentelemetry/api` cannot be loaded here (Workers without nodejs_compat).
      record.pending = undefined;
      return this.#handed.startActiveSpan(SPAN_NAMES.process, pending, (span) => {
        record.span = span;
        return fn();
      });
    }
    const span = record?.span;
    if (span === undefined || this.#api === undefined) return fn();
    const { context, trace } = this.#api;
    // The span came from the API's tracer (`#liveTracer`), so it is the API's Span.
    return context.with(trace.setSpan(context.active(), span as Span), fn);
  }

  /** Ends a try: the error on its span when it failed, and its duration. */
  endTry(record: TryRecord | undefined, failed: boolean, error?: unknown): void {
    if (record === undefined) return;
    const { span } = record;
    if (span !== undefined) {
      if (failed) {
        span.recordException(error instanceof Error ? error : String(error));
        span.setAttribute('error.type', errorType(error));
        span.setStatus({ code: ERROR });
      }
      span.end();
    }
    this.#metrics?.recordTry((performance.now() - record.started) / 1000, failed);
  }

  countSuperseded(handlerId: string | undefined): void {
    this.#metrics?.countSuperseded(handlerId);
  }

  /** Stops observing the queue depth (at `close()`). */
  dispose(): void {
    this.#metrics?.dispose();
  }
}

/**
 * The receiver's telemetry when `@opentelemetry/api` is installed or a `tracer` is handed in, else
 * `undefined` (then nothing is recorded and nothing fails).
 */
export function createReceiverTelemetry(
  depth: QueueDepth,
  tracer?: ReceiverTracer,
): ReceiverTelemetry | undefined {
  const loaded = loadOtel(depth);
  if (loaded === undefined && tracer === undefined) return undefined;
  return new OtelTelemetry(loaded, tracer);
}
