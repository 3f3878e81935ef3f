import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createOpsHandler } from '../src/index.js';
import { failingReceiver, makeAlert, until, type FailingReceiver } from './fixture.js';

// Where no worker runs the queue, the page says that a retried alert waits for the next sweep:
// read from the queue a receiver in invocation mode is attached to, or from `invocationMode`
// when the page has a queue object of its own (a Next.js route that makes its own queue).

// The page's mark that its script reads to add the sweep line after a retry (the note itself is
// shown above a list of failed alerts).
const NOTE = 'data-sweep=""';

function newQueue(): ReturnType<typeof createDurableQueue> {
  return createDurableQueue(createMemoryStore(), { leaseMs: 2_000, pollIntervalMs: 20 });
}

async function pageOf(ops: ReturnType<typeof createOpsHandler>): Promise<string> {
  const response = await ops(new Request('http://ops.test/ops'));
  expect(response.status).toBe(200);
  return response.text();
}

describe('the sweep note of the operations page', () => {
  let fixture: FailingReceiver | undefined;
  afterEach(async () => {
    await fixture?.receiver.close({ timeoutMs: 5_000 });
    fixture = undefined;
  });

  it('follows the queue: shown when a receiver in invocation mode is attached, not with a worker', async () => {
    const swept = newQueue();
    fixture = failingReceiver(swept, 'invocation');
    await fixture.deliver(makeAlert());
    await fixture.receiver.sweep({ budgetMs: 2_000 });
    const page = await pageOf(createOpsHandler({ queue: swept, authorize: 'none' }));
    expect(page).toContain(NOTE);
    expect(page).toMatch(/<p class="note">\s*No worker runs this queue/);
    await fixture.receiver.close({ timeoutMs: 5_000 });

    const worked = newQueue();
    fixture = failingReceiver(worked);
    await fixture.deliver(makeAlert());
    await until(async () => (await worked.failed()).length === 1);
    expect(await pageOf(createOpsHandler({ queue: worked, authorize: 'none' }))).not.toContain(
      NOTE,
    );
  });

  it('is shown for a queue of its own with invocationMode: true, and hidden with false', async () => {
    const own = newQueue(); // no receiver attached: the page alone cannot tell
    expect(await pageOf(createOpsHandler({ queue: own, authorize: 'none' }))).not.toContain(NOTE);
    const told = createOpsHandler({ queue: own, authorize: 'none', invocationMode: true });
    expect(await pageOf(told)).toContain(NOTE);

    const swept = newQueue();
    fixture = failingReceiver(swept, 'invocation');
    const overridden = createOpsHandler({ queue: swept, authorize: 'none', invocationMode: false });
    expect(await pageOf(overridden)).not.toContain(NOTE);
  });

  it('refuses an invocationMode that is not a boolean with a TypeError naming it', () => {
    expect(() =>
      createOpsHandler({
        queue: newQueue(),
        authorize: 'none',
        invocationMode: 'yes' as unknown as boolean,
      }),
    ).toThrow(/invocationMode/);
  });
});
