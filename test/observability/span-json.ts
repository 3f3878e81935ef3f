import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** What the test asserts on: a span as plain JSON. */
export interface SpanJson {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  status: number;
  events: { name: string; attributes: Record<string, unknown> }[];
}

/** A finished span as plain JSON, for a test in another process. */
export function spanJson(span: ReadableSpan): SpanJson {
  return {
    name: span.name,
    kind: span.kind,
    traceId: span.spanContext().traceId,
    spanId: span.spanContext().spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    attributes: { ...span.attributes },
    links: span.links.map((link) => ({
      traceId: link.context.traceId,
      spanId: link.context.spanId,
    })),
    status: span.status.code,
    events: span.events.map((event) => ({ name: event.name, attributes: { ...event.attributes } })),
  };
}
