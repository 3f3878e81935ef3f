export { createEventBatcher, type EventBatcher, type SendBatch } from './event-batcher.js';
export { BATCHER_DEFAULTS, type BatcherOptions } from './batcher-options.js';
