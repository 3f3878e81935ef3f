import type {
  Attributes,
  Counter,
  Histogram,
  MeterProvider,
  ObservableGauge,
  ObservableResult,
} from '@opentelemetry/api';
import { VERSION } from '../version.js';
import { INSTRUMENTATION_SCOPE, isNoop, registeredGlobals, type OtelApi } from './otel-api.js';

/** The receiver's OpenTelemetry metric names. */
export const METRIC_NAMES = Object.freeze({
  deliveries: 'churn_risk.webhook.deliveries',
  processDuration: 'churn_risk.alert.process.duration',
  queueDepth: 'churn_risk.queue.depth',
  superseded: 'churn_risk.alert.superseded',
});

const SUCCESS: Attributes = Object.freeze({ outcome: 'success' });
const FAILURE: Attributes = Object.freeze({ outcome: 'failure' });

/**
 * Reads the number of alerts waiting, for the `churn_risk.queue.depth` gauge: at once for a queue in
 * this process, from the store for a shared one (a rejected read observes nothing).
 */
export type QueueDepth = () => number | Promise<number>;

interface Instruments {
  deliveries: Counter;
  duration: Histogram;
  superseded: Counter;
  depth: ObservableGauge;
}

/**
 * A receiver's metrics, on whatever meter provider is registered now (it may be registered or
 * replaced after the receiver was created). Without one, each call is a property read.
 */
export class ReceiverMetrics {
  readonly #api: OtelApi;
  readonly #depth: QueueDepth;
  readonly #observeDepth = (result: ObservableResult): void | Promise<void> => {
    const depth = this.#depth();
    if (typeof depth === 'number') {
      result.observe(depth);
      return;
    }
    return depth.then(
      (value) => {
        result.observe(value);
      },
      () => undefined, // the store did not answer: no point this time
    );
  };
  #provider: MeterProvider | undefined;
  #instruments: Instruments | undefined;
  /** One attributes object per status and code, made once: counting allocates nothing. */
  readonly #deliveryAttributes = new Map<number, Map<string, Attributes>>();

  /** `depth` reads the number of alerts waiting, for the `churn_risk.queue.depth` gauge. */
  constructor(api: OtelApi, depth: QueueDepth) {
    this.#api = api;
    this.#depth = depth;
    this.instruments(); // registers the gauge at once when a meter provider is there
  }

  /** The instruments of the registered meter provider, or `undefined` when there is none. */
  instruments(): Instruments | undefined {
    const provider =
      registeredGlobals()?.metrics === undefined
        ? undefined // no SDK: one property read
        : this.#api.metrics.getMeterProvider();
    if (provider === this.#provider) return this.#instruments;
    this.dispose();
    this.#provider = provider;
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
      superseded: meter.createCounter(METRIC_NAMES.superseded, {
        description:
          "Handler runs skipped because a newer alert of the user was accepted (superseded: 'skip').",
        unit: '{run}',
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

  /** Counts an answered delivery by status and refusal code. */
  countDelivery(status: number, code: string | undefined): void {
    this.instruments()?.deliveries.add(1, this.#attributesOf(status, code));
  }

  /** Records one handler try's duration by outcome. */
  recordTry(seconds: number, failed: boolean): void {
    this.instruments()?.duration.record(seconds, failed ? FAILURE : SUCCESS);
  }

  /** Counts a handler run skipped for a superseded alert, by handler id. */
  countSuperseded(handlerId: string | undefined): void {
    this.instruments()?.superseded.add(
      1,
      handlerId === undefined ? {} : { 'churn_risk.handler.id': handlerId },
    );
  }

  /** Stops observing the queue depth. */
  dispose(): void {
    this.#instruments?.depth.removeCallback(this.#observeDepth);
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
}

/** The API, loaded by the receiver itself (`#otel`), with the receiver's metrics on it. */
export interface LoadedOtel {
  api: OtelApi;
  metrics: ReceiverMetrics;
}
