import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { opsApiSuite } from './api-suite.js';
import { failingReceiver, until } from './fixture.js';

// The API suite over core's in-memory store (the reference store), in this process.
opsApiSuite('the in-memory store', () => {
  const queue = createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
  const fixture = failingReceiver(queue);
  return Promise.resolve({
    queue,
    fixture,
    settle: (done) => until(done),
    close: () => fixture.receiver.close({ timeoutMs: 5_000 }),
  });
});
