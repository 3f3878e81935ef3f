import { describe, expectTypeOf, it } from 'vitest';
import {
  createQueueReceiver,
  createReceiver,
  type AlertContext,
  type ChurnRiskAlert,
  type Receiver,
} from '@churn-risk/core';
import { type ReceiverResult } from '@churn-risk/core/adapter';
import { createDurableQueue, createMemoryStore } from '@churn-risk/core/store';

describe('receiver types', () => {
  const receiver = createReceiver({ secret: 'whsec_types' });

  it('types the churn_risk_alert handler by the event map', () => {
    receiver.on('churn_risk_alert', (alert, context) => {
      expectTypeOf(alert).toEqualTypeOf<ChurnRiskAlert>();
      expectTypeOf(alert.tier).toEqualTypeOf<'low' | 'medium' | 'high'>();
      expectTypeOf(context).toEqualTypeOf<AlertContext>();
    });
    receiver.onError((error, alert, context) => {
      expectTypeOf(error).toBeUnknown();
      expectTypeOf(alert).toEqualTypeOf<ChurnRiskAlert>();
      expectTypeOf(context.attempt).toBeNumber();
    });
  });

  it('refuses an unknown event name and a handler of the wrong payload', () => {
    // @ts-expect-error: no such event
    receiver.on('user_scored', () => undefined);
    // @ts-expect-error: the payload is a ChurnRiskAlert, not a number
    receiver.on('churn_risk_alert', (alert: number) => alert);
    // @ts-expect-error: a secret is required
    createReceiver({});
  });

  it('chains and exposes the framework-free API', () => {
    expectTypeOf(receiver.on('churn_risk_alert', () => undefined)).toEqualTypeOf<Receiver>();
    expectTypeOf(receiver.handle).returns.resolves.toEqualTypeOf<ReceiverResult>();
    expectTypeOf(receiver.fetch).returns.resolves.toEqualTypeOf<Response>();
    expectTypeOf(receiver.maxBodyBytes).toBeNumber();
  });

  it('createQueueReceiver needs a queue, takes no in-memory queue option, and gives a Receiver', () => {
    const queue = createDurableQueue(createMemoryStore());
    expectTypeOf(createQueueReceiver({ secret: 'whsec_types', queue })).toEqualTypeOf<Receiver>();
    // @ts-expect-error: the queue is required
    createQueueReceiver({ secret: 'whsec_types' });
    // @ts-expect-error: dedupe configures the in-memory queue
    createQueueReceiver({ secret: 'whsec_types', queue, dedupe: false });
    // @ts-expect-error: so does maxQueue
    createQueueReceiver({ secret: 'whsec_types', queue, maxQueue: 10 });
  });
});
