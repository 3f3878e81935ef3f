import type { AlertQueue } from '../queue-port/alert-queue.js';
import type { ReceiverHealth } from './types.js';

/**
 * `receiver.health()`: the receiver's state and, when the queue reports it, whether its store
 * answers. A queue whose health check throws counts as unreachable (its error is not passed on:
 * it may hold a connection string).
 */
export async function receiverHealth(queue: AlertQueue, closed: boolean): Promise<ReceiverHealth> {
  const health: ReceiverHealth = {
    ok: !closed,
    closed,
    queued: queue.queued,
    running: queue.running,
  };
  if (typeof queue.health !== 'function') return health;
  let report: ReceiverHealth['queue'];
  try {
    const answer = await queue.health();
    report = { kind: queue.kind, reachable: answer.reachable };
    if (typeof answer.error === 'string') report.error = answer.error;
  } catch {
    report = { kind: queue.kind, reachable: false, error: 'The queue health check failed.' };
  }
  health.queue = report;
  health.ok = !closed && report.reachable;
  return health;
}
