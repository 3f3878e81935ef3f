/**
 * The OpenTelemetry SDK as a test registers it: an in-memory span exporter, a metric reader that
 * collects on demand, and async-hooks context propagation. `installTestSdk()` in `beforeEach`,
 * `uninstall()` in `afterEach`.
 */
import * as otel from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  MeterProvider,
  MetricReader,
  type DataPoint,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

export { otel };
const { context, metrics, trace } = otel;

/** A reader that collects when asked (`collect()`), nothing periodic. */
class OnDemandReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export interface TestSdk {
  spans(): ReadableSpan[];
  /** Every data point of the metric `name`, by attributes. */
  points(name: string): DataPoint<unknown>[];
  /** Collects the metrics now. */
  collect(): Promise<MetricData[]>;
  uninstall(): Promise<void>;
}

export function installTestSdk(): TestSdk {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  let collected: MetricData[] = [];
  return {
    spans: () => exporter.getFinishedSpans(),
    points: (name) =>
      collected
        .filter((metric) => metric.descriptor.name === name)
        .flatMap((metric) => metric.dataPoints as DataPoint<unknown>[]),
    async collect() {
      const { resourceMetrics } = await reader.collect();
      collected = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
      return collected;
    },
    async uninstall() {
      trace.disable();
      metrics.disable();
      context.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}
