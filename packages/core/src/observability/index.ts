export type { LogFields, Logger, LogLevel, LogMethod, LogThreshold } from './logger.js';
export type { RejectedDelivery, RejectedListener } from './receiver-observer.js';
export type { TraceCarrier } from './trace-carrier.js';
export type {
  ReceiverTracer,
  TracerAttributeValue,
  TracerSpan,
  TracerSpanContext,
  TracerSpanOptions,
} from './receiver-tracer.js';
