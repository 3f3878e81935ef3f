import type { TracerSpanContext } from './receiver-tracer.js';

/**
 * The trace context of an alert's `receive` span, carried with the alert (in Redis mode inside the
 * job) so that the `process` spans of whichever process runs the handlers link to it. The W3C
 * `traceparent` format, written and read here, so that it travels without a registered propagator.
 */
// A type alias, not an interface: it must fit `AlertRecord<'accepted'>.traceContext` (a string record).
export type TraceCarrier = {
  /** `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>`. */
  traceparent: string;
  /** The W3C `tracestate` list, when the span has one. */
  tracestate?: string;
};

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** The carrier of a span context (a valid one; see `isSpanContextValid`). */
export function toTraceCarrier(context: TracerSpanContext): TraceCarrier {
  const flags = (context.traceFlags & 0xff).toString(16).padStart(2, '0');
  const carrier: TraceCarrier = {
    traceparent: `00-${context.traceId}-${context.spanId}-${flags}`,
  };
  const state = context.traceState?.serialize();
  if (state !== undefined && state !== '') carrier.tracestate = state;
  return carrier;
}

/**
 * The span context a carrier describes, marked remote, or `undefined` for anything malformed (a
 * carrier read from a queue is untrusted input). `traceState` is left out: a link needs only ids.
 */
export function fromTraceCarrier(carrier: unknown): TracerSpanContext | undefined {
  const traceparent = (carrier as { traceparent?: unknown } | null | undefined)?.traceparent;
  if (typeof traceparent !== 'string') return undefined;
  const match = TRACEPARENT.exec(traceparent);
  if (match === null) return undefined;
  const [, traceId = '', spanId = '', flags = '00'] = match;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
}
