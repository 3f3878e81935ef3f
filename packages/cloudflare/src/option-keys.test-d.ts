import { describe, expectTypeOf, it } from 'vitest';
import { OPTION_KEYS as QUEUE_KEYS, type CloudflareQueueOptions } from './cloudflare-queue.js';
import {
  OPTION_KEYS as QUEUE_WORKER_KEYS,
  type CreateQueueWorkerOptions,
} from './create-queue-worker.js';
import { OPTION_KEYS as WORKER_KEYS, type CreateWorkerOptions } from './create-worker.js';

// The lists of known option keys (an unknown key is a TypeError) hold every key of the options
// types: a key added to a type and not to its list fails here.
describe('known option keys', () => {
  it('createWorker knows every key of CreateWorkerOptions', () => {
    type Keys = keyof CreateWorkerOptions<unknown>;
    expectTypeOf<Exclude<Keys, (typeof WORKER_KEYS)[number]>>().toEqualTypeOf<never>();
  });

  it('createQueueWorker knows every key of CreateQueueWorkerOptions', () => {
    type Keys = keyof CreateQueueWorkerOptions<unknown>;
    expectTypeOf<Exclude<Keys, (typeof QUEUE_WORKER_KEYS)[number]>>().toEqualTypeOf<never>();
  });

  it('createCloudflareQueue knows every key of CloudflareQueueOptions', () => {
    type Keys = keyof CloudflareQueueOptions;
    expectTypeOf<Exclude<Keys, (typeof QUEUE_KEYS)[number]>>().toEqualTypeOf<never>();
  });
});
