/**
 * `#otel` where only Web APIs exist (Workers, edge runtimes, browsers): nothing can load
 * `@opentelemetry/api` here, so the receiver records spans only on a `tracer` handed in, and no
 * metrics. Keeping the loader and the metrics out of such bundles is this file's purpose.
 */
import type { LoadedOtel, QueueDepth } from './receiver-metrics.js';

/** Always `undefined`: see `otel-node.ts` for Node. */
export function loadOtel(_depth: QueueDepth): LoadedOtel | undefined {
  return undefined;
}
