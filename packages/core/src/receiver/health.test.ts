import { describe, expect, it } from 'vitest';
import { createReceiver } from '@churn-risk/core';
import { createMemoryQueue, type AlertQueue, type QueueHealth } from '@churn-risk/core/store';

/** The default queue, plus a store whose health answers as given. */
function queueReporting(health: () => Promise<QueueHealth>): AlertQueue {
  const inner = createMemoryQueue();
  return {
    kind: 'fake',
    processesInline: true,
    attach: (processor) => inner.attach(processor),
    accept: (entry) => inner.accept(entry),
    consume: () => inner.consume(),
    idle: (signal) => inner.idle(signal),
    close: (signal) => inner.close(signal),
    get queued() {
      return inner.queued;
    },
    get running() {
      return inner.running;
    },
    health,
  };
}

describe('receiver.health()', () => {
  it('is ok with the in-memory queue until close()', async () => {
    const receiver = createReceiver({ secret: 's' });
    expect(await receiver.health()).toEqual({ ok: true, closed: false, queued: 0, running: 0 });
    await receiver.close();
    expect(await receiver.health()).toEqual({ ok: false, closed: true, queued: 0, running: 0 });
  });

  it("reports a queue's reachability and is not ok while its store does not answer", async () => {
    let reachable = true;
    const queue = queueReporting(() =>
      Promise.resolve(reachable ? { reachable } : { reachable, error: 'PING timed out' }),
    );
    const receiver = createReceiver({ secret: 's', queue });
    expect(await receiver.health()).toMatchObject({
      ok: true,
      queue: { kind: 'fake', reachable: true },
    });
    reachable = false;
    expect(await receiver.health()).toMatchObject({
      ok: false,
      closed: false,
      queue: { kind: 'fake', reachable: false, error: 'PING timed out' },
    });
  });

  it('counts a health check that throws as unreachable, without passing its message on', async () => {
    const queue = queueReporting(() => Promise.reject(new Error('redis://:hunter2@db:6379 down')));
    const health = await createReceiver({ secret: 's', queue }).health();
    expect(health).toMatchObject({ ok: false, queue: { reachable: false } });
    expect(JSON.stringify(health)).not.toContain('hunter2');
  });
});
