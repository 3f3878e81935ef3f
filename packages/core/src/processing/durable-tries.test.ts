import { describe, expect, it } from 'vitest';
import {
  createReceiver,
  AlertStalledError,
  HandlersFailedError,
  type AlertContext,
  type ChurnRiskAlert,
  type Receiver,
} from '@churn-risk/core';
import {
  createMemoryQueue,
  type AlertProcessor,
  type AlertQueue,
  type AlertRecord,
} from '@churn-risk/core/store';
import type { TryVerdict } from '../queue-port/try-types.js';
import { runStoredTry } from './try-protocol.js';

// The try protocol a durable queue (Redis, or a future Postgres or SQS package) relies on: each
// try's verdict records the ids of the handlers that succeeded, and the next try, in any process
// and after any deploy, skips exactly those.

/** A queue that only hands out the processor: a durable queue's worker side. */
function durableQueue(onAttach: (processor: AlertProcessor) => void): AlertQueue {
  const inner = createMemoryQueue();
  return {
    kind: 'durable-test',
    processesInline: false,
    durable: true,
    attach: onAttach,
    accept: (entry) => inner.accept(entry),
    consume: () => undefined,
    idle: () => Promise.resolve(),
    close: () => Promise.resolve(),
    queued: 0,
    running: 0,
  };
}

/** A receiver on a durable queue, and its processor; `register` adds its handlers. */
function processorOf(
  register: (receiver: Receiver) => void,
  retries = 3,
): { processor: AlertProcessor; receiver: Receiver } {
  let processor: AlertProcessor | undefined;
  const receiver = createReceiver({
    secret: 'whsec_durable',
    retries,
    queue: durableQueue((given) => {
      processor = given;
    }),
  });
  register(receiver);
  if (processor === undefined) throw new Error('attach was not called');
  return { processor, receiver };
}

const entry: AlertRecord<'accepted'> = {
  id: 'user_1:2026-11-01T00:00:00.000Z',
  alert: {
    event: 'churn_risk_alert',
    userId: 'user_1',
    score: 0.9,
    tier: 'high',
    signals: ['payment_failed'],
    recommendation: 'Call them.',
    triggeredAt: '2026-11-01T00:00:00.000Z',
  },
  receivedAt: Date.UTC(2026, 10, 1),
};

type Handler = (alert: ChurnRiskAlert, context: AlertContext) => unknown;

/** One factory's handlers: the same source text for every name (the case hashes could not tell). */
const notify =
  (name: string, log: string[], fail: () => boolean = () => false): Handler =>
  () => {
    log.push(name);
    if (fail()) throw new Error(`${name} failed`);
  };

/**
 * One try of the stored alert (`tries` made, `succeeded` recorded), as a durable queue runs it:
 * the verdict is applied (stored) at once, then a failure is reported.
 */
async function tryStored(
  processor: AlertProcessor,
  tries: number,
  succeeded: readonly string[],
  stalls = 0,
): Promise<TryVerdict> {
  let applied: TryVerdict | undefined;
  await runStoredTry(processor.input(entry), { tries, succeeded, stalls }, 3, (verdict) => {
    applied = verdict;
    return Promise.resolve(true);
  });
  if (applied === undefined) throw new Error('no verdict was applied');
  return applied;
}

function recordOf(verdict: TryVerdict): readonly string[] {
  if (verdict.outcome === 'completed') throw new Error('the try completed');
  return verdict.succeeded;
}

describe('runTry: which handlers a try runs, across deploys', () => {
  it('records the handlers that succeeded by id and skips only them on the retry', async () => {
    const log: string[] = [];
    let bFails = true;
    const { processor } = processorOf((receiver) => {
      receiver.on('churn_risk_alert', notify('a', log), { id: 'a' });
      receiver.on(
        'churn_risk_alert',
        notify('b', log, () => bFails),
        { id: 'b' },
      );
    });
    const first = await tryStored(processor, 0, []);
    expect(first).toMatchObject({ outcome: 'retry', delayMs: 1000, succeeded: ['a'] });
    if (first.outcome !== 'retry') throw new Error('unreachable');
    expect(first.error).toBeInstanceOf(HandlersFailedError);
    expect(first.error.message).toBe('Handler b failed: Error: b failed');
    bFails = false;
    expect(await tryStored(processor, 1, recordOf(first))).toEqual({ outcome: 'completed' });
    expect(log).toEqual(['a', 'b', 'b']);
  });

  it('a deploy that reorders one factory\'s handlers (notify("a"), notify("b") -> b, a) never skips b', async () => {
    const log: string[] = [];
    const before = processorOf((receiver) => {
      receiver.on('churn_risk_alert', notify('a', log), { id: 'notify-a' });
      receiver.on(
        'churn_risk_alert',
        notify('b', log, () => true),
        { id: 'notify-b' },
      );
    });
    const first = await tryStored(before.processor, 0, []);
    expect(recordOf(first)).toEqual(['notify-a']);
    log.length = 0;
    const after = processorOf((receiver) => {
      receiver.on('churn_risk_alert', notify('b', log), { id: 'notify-b' });
      receiver.on('churn_risk_alert', notify('a', log), { id: 'notify-a' });
    });
    expect(await tryStored(after.processor, 1, recordOf(first))).toEqual({
      outcome: 'completed',
    });
    expect(log).toEqual(['b']);
  });

  it('a deploy that adds, removes or changes handlers runs every handler not recorded', async () => {
    const log: string[] = [];
    const before = processorOf((receiver) => {
      receiver.on('churn_risk_alert', notify('gone', log), { id: 'gone' });
      receiver.on('churn_risk_alert', notify('audit v1', log), { id: 'audit' });
      receiver.on(
        'churn_risk_alert',
        notify('crm', log, () => true),
        { id: 'crm' },
      );
    });
    const first = await tryStored(before.processor, 0, []);
    expect(recordOf(first)).toEqual(['gone', 'audit']);
    log.length = 0;
    // `gone` removed, `slack` added first, `audit` changed (same id: it succeeded, so skipped),
    // `crm` fixed, and `audit-v2` is a changed handler under a new id (so it runs).
    const after = processorOf((receiver) => {
      receiver.on('churn_risk_alert', notify('slack', log), { id: 'slack' });
      receiver.on('churn_risk_alert', notify('audit v2', log), { id: 'audit' });
      receiver.on('churn_risk_alert', notify('audit-v2', log), { id: 'audit-v2' });
      receiver.on('churn_risk_alert', notify('crm fixed', log), { id: 'crm' });
    });
    expect(await tryStored(after.processor, 1, recordOf(first))).toEqual({
      outcome: 'completed',
    });
    expect(log.sort()).toEqual(['audit-v2', 'crm fixed', 'slack']);
  });

  it('keeps ids that are no longer registered in the record, so a rollback skips them too', async () => {
    const { processor } = processorOf((receiver) => {
      receiver.on('churn_risk_alert', notify('x', []), { id: 'x' });
      receiver.on(
        'churn_risk_alert',
        notify('y', [], () => true),
        { id: 'y' },
      );
    });
    const verdict = await tryStored(processor, 1, ['old-handler']);
    expect(recordOf(verdict)).toEqual(['old-handler', 'x']);
  });

  it('after the last try calls onError once per failed handler, with its id in the error', async () => {
    const reported: [string, number][] = [];
    const { processor, receiver } = processorOf((r) => {
      r.on('churn_risk_alert', notify('ok', []), { id: 'ok' });
      r.on(
        'churn_risk_alert',
        notify('crm', [], () => true),
        { id: 'crm' },
      );
    }, 1);
    receiver.onError((error, _alert, context) => {
      reported.push([(error as Error).message, context.attempt]);
    });
    const first = await tryStored(processor, 0, []);
    expect(first.outcome).toBe('retry');
    expect(reported).toEqual([]);
    const last = await tryStored(processor, 1, recordOf(first));
    expect(last).toMatchObject({ outcome: 'failed', succeeded: ['ok'] });
    expect(reported).toEqual([['crm failed', 1]]);
    expect(receiver.stats.failed).toBe(1);
  });

  it('a sole handler without an id is never recorded: it runs on every try until it succeeds', async () => {
    let calls = 0;
    const { processor } = processorOf((receiver) => {
      receiver.on('churn_risk_alert', () => {
        calls += 1;
        if (calls === 1) throw new Error('first try');
      });
    });
    const first = await tryStored(processor, 0, []);
    expect(first).toMatchObject({ outcome: 'retry', succeeded: [] });
    if (first.outcome === 'retry')
      expect(first.error.message).toBe('Handler #0 failed: Error: first try');
    expect(await tryStored(processor, 1, [])).toEqual({ outcome: 'completed' });
  });

  it('fails an alert that stalled more than maxStalls times without a try, onError once', async () => {
    const reported: unknown[] = [];
    let runs = 0;
    const { processor, receiver } = processorOf((r) => {
      r.on('churn_risk_alert', () => {
        runs++;
      });
    });
    receiver.onError((error) => reported.push(error));
    const verdict = await tryStored(processor, 2, ['kept'], 4);
    expect(verdict).toMatchObject({ outcome: 'failed', succeeded: ['kept'] });
    expect(runs).toBe(0);
    expect(reported).toHaveLength(1);
    expect(reported[0]).toBeInstanceOf(AlertStalledError);
    expect((reported[0] as AlertStalledError).stalls).toBe(4);
    expect(receiver.stats.failed).toBe(1);
    // At the limit (3 stalls, maxStalls 3) it still runs.
    await tryStored(processor, 2, [], 3);
    expect(runs).toBe(1);
  });

  it('reports nothing when the verdict could not be stored (the lease was lost)', async () => {
    const reported: unknown[] = [];
    const { processor, receiver } = processorOf((r) => {
      r.on('churn_risk_alert', () => {
        throw new Error('down');
      });
    }, 0);
    receiver.onError((error) => reported.push(error));
    let outcome: string | undefined;
    await runStoredTry(processor.input(entry), { tries: 0, succeeded: [], stalls: 0 }, 3, (v) => {
      outcome = v.outcome;
      return Promise.resolve(false);
    });
    expect(outcome).toBe('failed');
    expect(reported).toEqual([]);
    expect(receiver.stats.failed).toBe(0);
  });
});

describe('receiver.on(event, handler, { id }): a bad, repeated or missing id is refused', () => {
  const handler = (): void => undefined;

  it('refuses an id that is not a non-empty string, and a repeated id', () => {
    const receiver = createReceiver({ secret: 'whsec_ids' });
    expect(() => receiver.on('churn_risk_alert', handler, { id: '' })).toThrow(TypeError);
    expect(() => receiver.on('churn_risk_alert', handler, { id: '  ' })).toThrow(/non-empty/);
    expect(() => receiver.on('churn_risk_alert', handler, { id: 42 as unknown as string })).toThrow(
      TypeError,
    );
    receiver.on('churn_risk_alert', handler, { id: 'crm' });
    expect(() => receiver.on('churn_risk_alert', () => undefined, { id: 'crm' })).toThrow(
      /"crm" is already registered/,
    );
  });

  it('in memory, handlers without ids are fine, several of them too', () => {
    const receiver = createReceiver({ secret: 'whsec_ids' });
    expect(() =>
      receiver.on('churn_risk_alert', handler).on('churn_risk_alert', handler),
    ).not.toThrow();
  });

  it('on a durable queue with two or more handlers, every handler needs an id', () => {
    const first = processorOf((receiver) => {
      receiver.on('churn_risk_alert', handler);
    }).receiver;
    expect(() => first.on('churn_risk_alert', handler, { id: 'b' })).toThrow(
      /durable queue \(durable-test\) and two or more handlers, every handler needs an id/,
    );
    const named = processorOf((receiver) => {
      receiver.on('churn_risk_alert', handler, { id: 'a' });
    }).receiver;
    expect(() => named.on('churn_risk_alert', handler)).toThrow(TypeError);
    expect(() => named.on('churn_risk_alert', handler, { id: 'b' })).not.toThrow();
  });

  it('off removes a handler, and its id can be registered again', () => {
    const receiver = createReceiver({ secret: 'whsec_ids' });
    receiver.on('churn_risk_alert', handler, { id: 'crm' });
    receiver.off('churn_risk_alert', handler);
    expect(() => receiver.on('churn_risk_alert', handler, { id: 'crm' })).not.toThrow();
  });
});
