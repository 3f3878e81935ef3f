import { describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  createReceiver,
  type AlertContext,
  type AlertProcessor,
  type AlertQueue,
  type ChurnRiskAlert,
  type QueuedAlert,
  type Receiver,
} from '@churn-risk/core';
import { handlerKeys } from './handler-keys.js';

// The contract a durable queue (Redis, or a future Postgres or SQS package) relies on: each try
// gives the keys of the handlers that succeeded, and the next try, in any process and after a
// deploy, skips exactly those.

/** A receiver whose queue only hands out the processor (a durable queue's worker side). */
function processorOf(register: (receiver: Receiver) => void): AlertProcessor {
  let processor: AlertProcessor | undefined;
  const inner = createMemoryQueue();
  const queue: AlertQueue = {
    kind: 'durable-test',
    processesInline: false,
    attach: (given) => {
      processor = given;
    },
    accept: (entry) => inner.accept(entry),
    release: (id) => inner.release(id),
    consume: () => undefined,
    idle: () => Promise.resolve(),
    close: () => Promise.resolve(),
    queued: 0,
    running: 0,
  };
  register(createReceiver({ secret: 'whsec_durable', queue }));
  if (processor === undefined) throw new Error('attach was not called');
  return processor;
}

const entry: QueuedAlert = {
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

/** A handler that logs its name; a new closure from the same source each call, as after a restart. */
const logging =
  (name: string, log: string[]): Handler =>
  () => {
    log.push(name);
  };
const failing =
  (name: string, log: string[]): Handler =>
  () => {
    log.push(name);
    throw new Error(`${name} failed`);
  };

describe('AlertProcessor.runTry: which handlers a retry skips', () => {
  it('skips the handlers that succeeded in an earlier try and runs the failed ones', async () => {
    const log: string[] = [];
    let fail = true;
    const processor = processorOf((receiver) => {
      receiver.on('churn_risk_alert', logging('A', log));
      receiver.on('churn_risk_alert', () => {
        log.push('B');
        if (fail) throw new Error('B failed');
      });
    });
    const first = await processor.runTry(entry, 0, new Set());
    expect(first.failures.map((f) => f.index)).toEqual([1]);
    expect(first.succeeded).toHaveLength(1);
    fail = false;
    const second = await processor.runTry(entry, 1, new Set(first.succeeded));
    expect(second.failures).toEqual([]);
    expect(second.succeeded).toHaveLength(2);
    expect(log).toEqual(['A', 'B', 'B']);
  });

  it('after a deploy that adds a handler before the others, the new one runs and the succeeded one is skipped', async () => {
    const before: string[] = [];
    const oldProcess = processorOf((receiver) => {
      receiver.on('churn_risk_alert', logging('A', before));
      receiver.on('churn_risk_alert', failing('B', before));
    });
    const first = await oldProcess.runTry(entry, 0, new Set());
    expect(before).toEqual(['A', 'B']);

    // Another process with the new code: C registered first, then A and B from the same source.
    const after: string[] = [];
    const newProcess = processorOf((receiver) => {
      receiver.on('churn_risk_alert', () => {
        after.push('C');
      });
      receiver.on('churn_risk_alert', logging('A', after));
      receiver.on('churn_risk_alert', failing('B', after));
    });
    const second = await newProcess.runTry(entry, 1, new Set(first.succeeded));
    // By registration index, the retry would have skipped C and run A again.
    expect(after.sort()).toEqual(['B', 'C']);
    expect(second.failures.map((f) => f.index)).toEqual([2]);
  });

  it('after a deploy that removes a handler, the ones left keep their keys', async () => {
    const log: string[] = [];
    const oldProcess = processorOf((receiver) => {
      receiver.on('churn_risk_alert', () => {
        log.push('gone');
      });
      receiver.on('churn_risk_alert', logging('A', log));
      receiver.on('churn_risk_alert', failing('B', log));
    });
    const first = await oldProcess.runTry(entry, 0, new Set());
    log.length = 0;
    const newProcess = processorOf((receiver) => {
      receiver.on('churn_risk_alert', logging('A', log));
      receiver.on('churn_risk_alert', failing('B', log));
    });
    await newProcess.runTry(entry, 1, new Set(first.succeeded));
    expect(log).toEqual(['B']);
  });

  it('runs a handler again when its code changed', async () => {
    const log: string[] = [];
    const oldProcess = processorOf((receiver) => {
      receiver.on('churn_risk_alert', () => {
        log.push('A v1');
      });
      receiver.on('churn_risk_alert', failing('B', log));
    });
    const first = await oldProcess.runTry(entry, 0, new Set());
    log.length = 0;
    const newProcess = processorOf((receiver) => {
      receiver.on('churn_risk_alert', () => {
        log.push('A v2');
      });
      receiver.on('churn_risk_alert', failing('B', log));
    });
    await newProcess.runTry(entry, 1, new Set(first.succeeded));
    expect(log.sort()).toEqual(['A v2', 'B']);
  });

  it('tells apart the same handler registered twice, by its rank', async () => {
    const log: string[] = [];
    let failSecond = true;
    let calls = 0;
    const twice: Handler = () => {
      calls += 1;
      log.push(`call ${String(calls)}`);
      if (calls === 2 && failSecond) throw new Error('second registration failed');
    };
    const processor = processorOf((receiver) => {
      receiver.on('churn_risk_alert', twice);
      receiver.on('churn_risk_alert', twice);
    });
    const first = await processor.runTry(entry, 0, new Set());
    expect(first.failures.map((f) => f.index)).toEqual([1]);
    failSecond = false;
    await processor.runTry(entry, 1, new Set(first.succeeded));
    expect(calls).toBe(3); // the first registration was skipped, the second ran again
  });
});

describe('handlerKeys', () => {
  it('is the same for closures of the same source and differs for other source', () => {
    const [a1, b1] = handlerKeys([logging('A', []), failing('B', [])]);
    const [a2, b2] = handlerKeys([logging('other name', []), failing('B', [])]);
    expect(a1).toBe(a2); // the same code, whatever it closes over
    expect(b1).toBe(b2);
    expect(a1).not.toBe(b1);
    expect(a1).toMatch(/^[0-9a-f]{16}\.0$/);
  });

  it('ranks handlers of the same source in order', () => {
    const handler = (): void => undefined;
    const other = (): number => 1;
    expect(handlerKeys([handler, other, handler]).map((key) => key.split('.')[1])).toEqual([
      '0',
      '0',
      '1',
    ]);
  });
});
