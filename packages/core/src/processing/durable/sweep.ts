import type { AlertProcessor, AlertRecord, SweepResult } from '../../queue-port/alert-queue.js';
import type { LeaseKeeper, RunMode } from './alert-runner.js';
import type { AlertStore, QueueCounts } from './alert-store.js';
import { describe, type Taken } from './take-loop.js';

/** What a sweep works with: the queue's store, its leases and its slots. */
export interface SweepParts {
  readonly store: AlertStore;
  readonly leases: LeaseKeeper;
  readonly processor: AlertProcessor;
  readonly leaseMs: number;
  /** Whether the queue is closing: no take starts then. */
  closing(): boolean;
  /** Runs a taken alert in a slot, counted in `running`, the way `mode` says. */
  run(taken: Taken, mode: RunMode): Promise<void>;
  /** Alerts were put back: a consuming loop of this process may take them. */
  poke(): void;
}

/**
 * Runs the alerts that are due now, within `budgetMs`: takes start until the last fifth
 * of the budget, `concurrency` slots at most, each slot taking its next alert with the completion
 * of the one before; resolves once every try it started has stored its verdict. A store failure
 * rejects with an `Error` naming the store.
 */
export async function sweepDue(parts: SweepParts, budgetMs: number): Promise<SweepResult> {
  const { store, leases, processor } = parts;
  const lastTakeAt = Date.now() + budgetMs - Math.floor(budgetMs / 5);
  const tally = { completed: 0, retried: 0, failed: 0 };
  const mode: RunMode = {
    chains: () => !parts.closing() && Date.now() < lastTakeAt,
    stored: (outcome) => {
      if (outcome === 'completed') tally.completed++;
      else if (outcome === 'retry') tally.retried++;
      else tally.failed++;
    },
  };
  const failed = (error: unknown): Error =>
    new Error(`The ${store.kind} store failed during the sweep: ${describe(error)}`, {
      cause: error,
    });
  // The reclaim runs beside the first takes, not before them: an invocation's sweep takes the
  // alert it just accepted without waiting for a reclaim's round trips. What the reclaim puts
  // back is taken by a second round once it is done.
  const reclaim = (async () => {
    try {
      return (await store.reclaimExpired?.()) ?? 0;
    } catch (error) {
      throw failed(error);
    }
  })();
  const slot = async (onTaken?: () => void): Promise<void> => {
    while (mode.chains()) {
      const token = leases.token();
      let taken: AlertRecord<'taken'> | undefined;
      try {
        taken = await store.take(
          processor.order === 'per-user'
            ? { token, leaseMs: parts.leaseMs, wait: false, perUser: true }
            : { token, leaseMs: parts.leaseMs, wait: false },
        );
      } catch (error) {
        throw failed(error);
      }
      if (taken === undefined) return;
      onTaken?.();
      onTaken = undefined;
      await parts.run({ taken, token }, mode);
    }
  };
  // One take first; the other slots join once it found an alert (an invocation's sweep usually
  // finds only the alert it just accepted: nine takes racing for it would only slow its start).
  const slots = async (): Promise<void> => {
    let others: Promise<Error | undefined> | undefined;
    const more = (): void => {
      // Settled at once (never an unhandled rejection while the first slot still runs).
      others = Promise.all(Array.from({ length: processor.concurrency - 1 }, () => slot())).then(
        () => undefined,
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      );
    };
    await slot(more);
    const error = await others;
    if (error !== undefined) throw error;
  };
  const [reclaimed] = await Promise.all([reclaim, slots()]);
  if (reclaimed > 0) {
    parts.poke();
    await slots();
  }
  let counts: [QueueCounts, number | undefined];
  try {
    counts = await Promise.all([store.counts(), store.nextDueInMs()]);
  } catch (error) {
    throw failed(error);
  }
  return { ...tally, left: counts[0].waiting, nextDueInMs: counts[1] };
}
