/**
 * The `tracer` option on Node, in a process of its own (see otel-scenarios.ts for why): a tracer
 * of an SDK provider that is NOT registered globally is handed to the receiver; a delivery goes
 * through, the handler starting a span of its own. Prints the finished spans, then whether the
 * global provider records (it must not: the spans went to the tracer handed in), as one JSON line.
 * Usage: node --conditions=@churn-risk/source --import tsx tracer-option-scenario.ts
 */
import { createReceiver } from '@churn-risk/core';
import { createTestDelivery } from '@churn-risk/core/testing';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { spanJson } from './span-json.js';

const SECRET = 'whsec_tracer_option';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

const tracer = provider.getTracer('tracer-option');
const receiver = createReceiver({ secret: SECRET, tracer });
receiver.on('churn_risk_alert', async () => {
  await Promise.resolve();
  tracer.startSpan('crm update').end(); // the try's span is active: its child
});
const delivery = createTestDelivery({ userId: 'user_tracer' }, { secret: SECRET });
const result = await receiver.handle({ method: 'POST', ...delivery });
await result.done;
await receiver.close();
console.log(
  JSON.stringify({
    status: result.status,
    spans: exporter.getFinishedSpans().map(spanJson),
    globalRecords: trace.getTracer('global').startSpan('probe').isRecording(),
  }),
);
