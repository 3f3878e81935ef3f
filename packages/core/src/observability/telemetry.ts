import type {
  Attributes,
  Counter,
  Histogram,
  MeterProvider,
  ObservableGauge,
  Span,
  SpanContext,
  Tracer,
  TracerProvider,
} from '@opentelemetry/api';
import { VERSION } from '../client/version.js';
import { otelApi, type OtelApi } from './otel-api.js';

/** Instrumentation scope name of every span and metric. */
export const INSTRUMENTATION_SCOPE = '@churn-risk/core';

/** Names of SPEC section 10. */
export const SPAN_NAMES = Object.freeze({
  receive: 'receive churn_risk_alert',
  process: 'process churn_risk_alert',
});
export const METRIC_NAMES = Object.freeze({
  deliveries: 'churn_risk.webhook.deliveries',
  processDuration: 'churn_risk.alert.process.duration',
  queueDepth: 'churn_risk.queue.depth',
});

/** Messaging semantic conventions shared by both spans. */
const MESSAGING = {
  'messaging.system': 'churn_risk',
  'messaging.destination.name': 'churn_risk_alert',
};
const SUCCESS: Attributes = Object.freeze({ outcome: 'success' });
const FAILURE: Attributes = Object.freeze({ outcome: 'failure' });

/** A handler try being measured: its span (when tracing) and its start. */
export interface TryRecord {
  span: Span | undefined;
  started: number;
}

interface Instruments {
  deliveries: Counter;
  duration: Histogram;
  depth: ObservableGauge;
}

const isNoop = (value: object, name: string): boolean => value.constructor.name === name;

/**
 * Where every copy of the API (major version 1) keeps what an SDK registered. Reading it first
 * spares the API calls, when no SDK is registered, on every delivery.
 */
const GLOBAL_KEY = Symbol.for('opentelemetry.js.api.1');
const registered = (): { trace?: unknown; metrics?: unknown } | undefined =>
  (globalThis as Record<symbol, { trace?: unknown; metrics?: unknown } | undefined>)[GLOBAL_KEY];

/** The error's type for `error.type`: its name, else its constructor's, else `_OTHER`. */
export function errorType(error: unknown): string {
  if (error instanceof Error) return error.name;
  const name = (error as { constructor?: { name?: unknown } } | null | undefined)?.constructor
    ?.name;
  return typeof name === 'string' && name !== '' ? name : '_OTHER';
}

/**
 * A receiver's OpenTelemetry instruments. Each call first checks, cheaply, whether an SDK is
 * registered (the provider may be registered or replaced after the receiver was created); with
 * the API installed but no SDK, a delivery allocates nothing here.
 */
export class ReceiverTelemetry {
  readonly #api: OtelApi;
  readonly #depth: () => number;
  readonly #observeDepth = (result: { observe(value: number): void }): void => {
    result.observe(this.#depth());
  };
  #tracerProvider: TracerProvider | undefined;
  #tracer: Tracer | undefined;
  #meterProvider: MeterProvider | undefined;
  #instruments: Instruments | undefined;
  readonly #deliveryAttributes = new Map<number, Map<string, Attributes>>();

  /** `depth` reads the number of alerts waiting, for the `churn_risk.queue.depth` gauge. */
  constructor(api: OtelApi, depth: () => number) {
    this.#api = api;
    this.#depth = depth;
    this.#metrics(); // registers the gauge at once when a meter provider is there
  }

  /** The tracer of the registered SDK, or `undefined` when none records traces. */
  #liveTracer(): Tracer | undefined {
    if (registered()?.trace === undefined) return undefined; // no SDK: one property read
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

  /** The instruments of the registered meter provider, or `undefined` when there is none. */
  #metrics(): Instruments | undefined {
    const provider =
      registered()?.metrics === undefined
        ? undefined // no SDK: one property read
        : this.#api.metrics.getMeterProvider();
    if (provider === this.#meterProvider) return this.#instruments;
    this.#instruments?.depth.removeCallback(this.#observeDepth);
    this.#meterProvider = provider;
    this.#instruments = undefined;
    if (provider === undefined || isNoop(provider, 'NoopMeterProvider')) return undefined;
    const meter = provider.getMeter(INSTRUMENTATION_SCOPE, VERSION);
    const instruments: Instruments = {
      deliveries: meter.createCounter(METRIC_NAMES.deliveries, {
        description: 'Webhook deliveries answered, by status and refusal code.',
        unit: '{delivery}',
      }),
      duration: meter.createHistogram(METRIC_NAMES.processDuration, {
        description: 'Duration of one handler try of an alert.',
        unit: 's',
      }),
      depth: meter.createObservableGauge(METRIC_NAMES.queueDepth, {
        description: 'Alerts waiting to be processed.',
        unit: '{alert}',
      }),
    };
    instruments.depth.addCallback(this.#observeDepth);
    this.#instruments = instruments;
    return instruments;
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
  endReceive(span: Span | undefined, status: number, code: string | undefined, id?: string): void {
    if (span !== undefined) {
      span.setAttribute('http.response.status_code', status);
      if (id !== undefined) span.setAttribute('messaging.message.id', id);
      if (code !== undefined) {
        span.setAttribute('error.type', code);
        span.setStatus({ code: this.#api.SpanStatusCode.ERROR, message: code });
      }
      span.end();
    }
    this.#metrics()?.deliveries.add(1, this.#attributesOf(status, code));
  }

  #attributesOf(status: number, code: string | undefined): Attributes {
    let byCode = this.#deliveryAttributes.get(status);
    if (byCode === undefined) {
      byCode = new Map<string, Attributes>();
      this.#deliveryAttributes.set(status, byCode);
    }
    const key = code ?? '';
    let attributes = byCode.get(key);
    if (attributes === undefined) {
      attributes = { 'http.response.status_code': status };
      if (code !== undefined) attributes['error.type'] = code;
      byCode.set(key, attributes);
    }
    return attributes;
  }

  /** Starts a handler try: a `process` span linked to `link` (the receive span), and its clock. */
  startTry(link: SpanContext | undefined, id: string, attempt: number): TryRecord | undefined {
    const tracer = this.#liveTracer();
    if (tracer === undefined && this.#metrics() === undefined) return undefined;
    const span = tracer?.startSpan(SPAN_NAMES.process, {
      kind: this.#api.SpanKind.CONSUMER, // a `process` operation
      root: true,
      links: link === undefined ? [] : [{ context: link }],
      attributes: {
        ...MESSAGING,
        'messaging.operation.type': 'process',
        'messaging.operation.name': 'process',
        'messaging.message.id': id,
        'churn_risk.handler.attempt': attempt,
      },
    });
    return { span, started: performance.now() };
  }

  /** Runs `fn` with the try's span active, so the handler's own spans are its children. */
  runInTry<T>(record: TryRecord | undefined, fn: () => T): T {
    const span = record?.span;
    if (span === undefined) return fn();
    const { context, trace } = this.#api;
    return context.with(trace.setSpan(context.active(), span), fn);
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
    const seconds = (performance.now() - record.started) / 1000;
    this.#metrics()?.duration.record(seconds, failed ? FAILURE : SUCCESS);
  }

  /** The link of a receive span (what an in-process alert keeps). */
  static linkOf(span: Span | undefined): SpanContext | undefined {
    return span?.spanContext();
  }

  /** Stops observing the queue depth (at `close()`). */
  dispose(): void {
    this.#instruments?.depth.removeCallback(this.#observeDepth);
  }
}

/**
 * The receiver's telemetry when `@opentelemetry/api` is installed, else `undefined` (then nothing
 * is recorded and nothing fails).
 */
export function createReceiverTelemetry(depth: () => number): ReceiverTelemetry | undefined {
  const api = otelApi();
  return api === undefined ? undefined : new ReceiverTelemetry(api, depth);
}
