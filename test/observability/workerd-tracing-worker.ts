/**
 * The worker that workerd-tracing.test.ts bundles and runs in workerd without `nodejs_compat`:
 * `createWorker` with a `tracer` handed in, from an OpenTelemetry SDK tracer provider that is NOT
 * registered globally and writes to an in-memory exporter. `GET /spans` answers the finished spans
 * of this isolate as JSON (and whether a Node `process` exists); any other request goes to the churn-risk worker. The handler fails for a
 * user id that starts with `fail_` (after its one try: `retries: 0`).
 */
import { createWorker } from '@churn-risk/cloudflare';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { spanJson } from './span-json.js';

interface Env {
  CHURN_RISK_WEBHOOK_SECRET: string;
}

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const worker = createWorker<Env>({
  secret: (env) => env.CHURN_RISK_WEBHOOK_SECRET,
  tracer: provider.getTracer('churn-risk-workerd-test'),
  retries: 0,
  logger: { debug() {}, info() {}, warn() {}, error() {} },
  setup: (receiver) => {
    receiver.on('churn_risk_alert', async (alert) => {
      await Promise.resolve();
      if (alert.userId.startsWith('fail_')) throw new Error(`no CRM record for ${alert.userId}`);
    });
  },
});

export default {
  fetch(
    request: Request,
    env: Env,
    ctx: { waitUntil(promise: Promise<unknown>): void },
  ): Response | Promise<Response> {
    if (new URL(request.url).pathname === '/spans') {
      // `nodeProcess`: what the receiver's loader of `@opentelemetry/api` would need.
      const nodeProcess = typeof (globalThis as { process?: unknown }).process;
      return Response.json({ nodeProcess, spans: exporter.getFinishedSpans().map(spanJson) });
    }
    return worker.fetch(request, env, ctx);
  },
};
