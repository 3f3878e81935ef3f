// A deploy between two tries of an alert: the first try runs in one process with one release of
// the handlers, that process stops, and the retry runs in another process with the next release.
// No deploy that adds, removes, reorders or changes handlers may skip a handler that has not yet
// succeeded for the alert, nor run again one that has (the store keeps the record of handler ids).
import type { AlertStore } from '../processing/durable/alert-store.js';
import { createDurableQueue } from '../processing/durable/durable-queue.js';
import type { SweepResult } from '../queue-port/alert-queue.js';
import { createReceiver } from '../create-receiver/create-receiver.js';
import type { Receiver } from '../receiver/types.js';
import type { StoreCaseKit, StoreFixture } from './store-fixture.js';
import { SECRET, delivery, eventually, same } from './support.js';

/**
 * A handler of a release: its id, the name it logs when it runs, and whether it throws. All of a
 * release's handlers come from one factory, so they share their source text: an id is the only
 * thing that tells them apart.
 */
type Handler = [id: string, name: string, fails?: 'fails'];

interface DeployCase {
  name: string;
  before: Handler[];
  after: Handler[];
  /** The names logged by the retry, in any order. */
  retry: string[];
  /** What the retry did: completed the alert, or failed again and left it delayed. */
  outcome: 'completed' | 'retried';
}

const CASES: DeployCase[] = [
  {
    name: 'deploys: a factory\'s handlers reordered (notify("a"), notify("b") -> b, a): b runs, a does not',
    before: [
      ['notify-a', 'a'],
      ['notify-b', 'b', 'fails'],
    ],
    after: [
      ['notify-b', 'b fixed'],
      ['notify-a', 'a'],
    ],
    retry: ['b fixed'],
    outcome: 'completed',
  },
  {
    name: 'deploys: a handler added in front runs; the one that succeeded is skipped; the failed one runs',
    before: [
      ['audit', 'audit'],
      ['crm', 'crm', 'fails'],
    ],
    after: [
      ['slack', 'slack'],
      ['audit', 'audit'],
      ['crm', 'crm fixed'],
    ],
    retry: ['crm fixed', 'slack'],
    outcome: 'completed',
  },
  {
    name: 'deploys: a handler removed is not needed any more; the others keep their record',
    before: [
      ['gone', 'gone'],
      ['audit', 'audit'],
      ['crm', 'crm', 'fails'],
    ],
    after: [
      ['audit', 'audit'],
      ['crm', 'crm fixed'],
    ],
    retry: ['crm fixed'],
    outcome: 'completed',
  },
  {
    name: 'deploys: a changed handler under a new id runs; under its old id it counts as done',
    before: [
      ['audit', 'audit v1'],
      ['score', 'score v1'],
      ['crm', 'crm', 'fails'],
    ],
    after: [
      ['audit', 'audit v2'],
      ['score-v2', 'score v2'],
      ['crm', 'crm fixed'],
    ],
    retry: ['crm fixed', 'score v2'],
    outcome: 'completed',
  },
  {
    name: 'deploys: a handler that still fails after the deploy is retried again, not skipped',
    before: [
      ['a', 'a'],
      ['b', 'b', 'fails'],
    ],
    after: [
      ['b', 'b again', 'fails'],
      ['a', 'a'],
    ],
    retry: ['b again'],
    outcome: 'retried',
  },
];

/**
 * How long the retry waits: longer than the one take with which the first process's sweep finds
 * nothing more to run, so that only the next release runs the retry.
 */
const RETRY_DELAY_MS = 300;

/** Registers the cases of a deploy between two tries, each on a fresh fixture. */
export function deployCases({ run, timeout }: StoreCaseKit): void {
  for (const { name, before, after, retry, outcome } of CASES) {
    run(name, async (fixture) => {
      const ran: string[] = [];
      const old = processOf(fixture, fixture.a, before, ran);
      same((await old.handle(delivery())).status, 202, 'the answer');
      const first = await sweepUntilATry(old, timeout);
      same(
        [first.completed, first.retried, first.failed],
        [0, 1, 0],
        'the first try (completed, retried, failed)',
      );
      same([...ran].sort(), before.map(([, logged]) => logged).sort(), 'the first try ran');
      same((await fixture.b.counts()).delayed, 1, 'alerts delayed after the first try');
      await old.close({ timeoutMs: timeout });

      ran.length = 0;
      const second = await sweepUntilATry(processOf(fixture, fixture.b, after, ran), timeout);
      same([...ran].sort(), [...retry].sort(), 'the retry ran');
      const expected = outcome === 'completed' ? [1, 0] : [0, 1];
      same(
        [second.completed, second.retried, second.failed],
        [...expected, 0],
        'the retry (completed, retried, failed)',
      );
      const { completed, delayed } = await fixture.b.counts();
      same([completed, delayed], expected, 'the store (completed, delayed)');
    });
  }
}

/** One process of one release on `store`: a receiver that runs tries only when it sweeps. */
function processOf(
  fixture: StoreFixture,
  store: AlertStore,
  release: Handler[],
  ran: string[],
): Receiver {
  const receiver = createReceiver({
    secret: SECRET,
    queue: createDurableQueue(store, { leaseMs: 10_000 }),
    consume: false,
    retries: { retries: 2, backoffMs: () => RETRY_DELAY_MS },
  });
  fixture.receivers.push(receiver);
  for (const [id, logged, fails] of release) {
    receiver.on(
      'churn_risk_alert',
      () => {
        ran.push(logged);
        if (fails !== undefined) throw new Error(`${logged} failed`);
      },
      { id },
    );
  }
  return receiver;
}

/** Sweeps until a sweep ran a try (the retry once it is due); resolves with that sweep's result. */
function sweepUntilATry(receiver: Receiver, timeout: number): Promise<SweepResult> {
  return eventually('a try runs', timeout / 2, async () => {
    const swept = await receiver.sweep({ budgetMs: 1_000 });
    return swept.completed + swept.retried + swept.failed > 0 ? swept : undefined;
  });
}
